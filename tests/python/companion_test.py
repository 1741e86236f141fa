#!/usr/bin/python3
"""The Python companion (python/headroom, docs/companion.md), run as CTest's CompanionPython
under Debian's /usr/bin/python3 with its python3-torch (CPU).

Each case runs a real job in its own interpreter (the companion's state is per process) with
the environment the guard sets, sends real signals, and reads the records file it wrote.
The Trainer and Lightning callbacks run against fakes of their documented callback
interfaces (transformers trainer_callback.py TrainerControl/TrainerState and the order
trainer.py calls them in; Lightning's Callback.on_train_batch_end and
Trainer.save_checkpoint): neither library is installable here (no network, not in Debian).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(HERE, "..", "..", "python")
PYTHON = "/usr/bin/python3"


def run_job(code, env_extra, timeout=60, unset=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_DIR
    for name in ("HEADROOM_STEP_RECORDS",) + tuple(unset):
        env.pop(name, None)
    env.update(env_extra)
    return subprocess.run([PYTHON, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=timeout)


def read_records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class CompanionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.records = os.path.join(self.tmp.name, "steps.jsonl")

    def fake_transformers(self, trainer_source):
        """A stand-in transformers package in a folder of its own (put it on PYTHONPATH):
        a TrainerCallback base and a trainer.py of `trainer_source` (dedented)."""
        fake = os.path.join(self.tmp.name, "fake")
        os.makedirs(os.path.join(fake, "transformers"))
        with open(os.path.join(fake, "transformers", "__init__.py"), "w") as f:
            f.write("class TrainerCallback:\n    pass\n")
        with open(os.path.join(fake, "transformers", "trainer.py"), "w") as f:
            f.write(textwrap.dedent(trainer_source))
        return fake

    def tearDown(self):
        self.tmp.cleanup()

    def test_without_the_variable_nothing_is_written(self):
        r = run_job("""
            import headroom
            headroom.on_save(lambda s: None)
            for i in range(5):
                assert headroom.step(i, loss=1.0) is False
            print("ok")
        """, {})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ok")
        self.assertFalse(os.path.exists(self.records))

    def test_step_records_with_torch_loaded(self):
        r = run_job("""
            import math, os, time, torch, headroom
            for i in range(6):
                headroom.step(i, tokens=512 * (i + 1), loss=2.0 - i * 0.1, lr=1e-4)
            headroom.step(6, loss=float("nan"))
            print(os.getpid())
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        recs = read_records(self.records)
        self.assertEqual(recs[0]["kind"], "start")
        self.assertEqual(recs[0]["signal"], signal.SIGUSR1)
        steps = [x for x in recs if x["kind"] == "step"]
        self.assertEqual([x["step"] for x in steps], list(range(7)))
        for x in recs:
            self.assertEqual(x["schema"], "headroom.step/1")
            self.assertEqual(x["pid"], int(r.stdout.strip()))
        self.assertEqual(steps[2]["tokens"], 1536)
        self.assertAlmostEqual(steps[3]["loss"], 1.7)
        self.assertEqual(steps[3]["lr"], 1e-4)
        self.assertEqual(steps[6]["loss"], "nan")
        # CPU torch: no CUDA allocator, so no allocator figures; the host peak is there.
        self.assertIsNone(steps[0]["allocated_bytes"])
        self.assertGreater(steps[0]["host_peak_rss_bytes"], 50 * 2**20)  # torch alone is more
        monos = [x["mono"] for x in steps]
        self.assertEqual(monos, sorted(monos))
        self.assertLess(abs(steps[0]["mono"] - time.monotonic()), 120)  # one clock with C++'s
        self.assertLess(abs(steps[0]["wall"] - time.time()), 120)

    def test_every_n_steps(self):
        r = run_job("""
            import headroom
            for i in range(1, 11):
                headroom.step(i)
        """, {"HEADROOM_STEP_RECORDS": self.records, "HEADROOM_STEP_EVERY": "4"})
        self.assertEqual(r.returncode, 0, r.stderr)
        steps = [x["step"] for x in read_records(self.records) if x["kind"] == "step"]
        self.assertEqual(steps, [1, 4, 8])  # the first, then every fourth call

    def test_signal_saves_at_the_end_of_the_step(self):
        ckpt = os.path.join(self.tmp.name, "ckpt.pt")
        r = run_job("""
            import os, signal, sys, torch, headroom
            model = torch.nn.Linear(4, 4)
            def save(step):
                torch.save({"step": step, "model": model.state_dict()}, sys.argv[0] + ".pt")
                return sys.argv[0] + ".pt"
            headroom.on_save(save)
            saved = []
            for i in range(10):
                if i == 4:
                    os.kill(os.getpid(), signal.SIGUSR1)   # as the guard sends it
                if headroom.step(i, loss=0.5):
                    saved.append(i)
            print(saved)
        """.replace("sys.argv[0] + \".pt\"", repr(ckpt)), {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "[4]")  # once, at the step the signal came in
        recs = read_records(self.records)
        kinds = [x["kind"] for x in recs]
        i = kinds.index("save_start")
        self.assertEqual(recs[i]["step"], 4)
        self.assertEqual(recs[i - 1]["kind"], "step")
        self.assertEqual(recs[i - 1]["step"], 4)
        end = recs[i + 1]
        self.assertEqual(end["kind"], "save_end")
        self.assertTrue(end["ok"])
        self.assertEqual(end["path"], ckpt)
        self.assertEqual(end["reason"], "guard")
        self.assertGreaterEqual(end["duration_s"], 0)
        self.assertAlmostEqual(end["duration_s"], end["mono"] - recs[i]["mono"], places=2)
        # What wrote it, for `ladder`'s resume command: the loop's own save function.
        self.assertEqual((recs[i]["source"], end["source"]), ("loop", "loop"))
        import torch  # noqa: the checkpoint loads and holds its step
        self.assertEqual(torch.load(ckpt)["step"], 4)

    def test_the_records_variable_alone_handles_sigusr1(self):
        # What a user sets to start a job that `guard --pid --step-records` attaches to
        # (docs/guard.md): HEADROOM_STEP_RECORDS only. The handler is then SIGUSR1's, the
        # guard's default, and the start record says so; no request file.
        env = {"HEADROOM_STEP_RECORDS": self.records}
        r = run_job("""
            import os
            for name in ("HEADROOM_CHECKPOINT_SIGNAL", "HEADROOM_CHECKPOINT_REQUEST"):
                assert name not in os.environ, name
            import headroom
            headroom.on_save(lambda s: "saved-%d" % s)
            headroom.step(0)
        """, env, unset=("HEADROOM_CHECKPOINT_SIGNAL", "HEADROOM_CHECKPOINT_REQUEST"))
        self.assertEqual(r.returncode, 0, r.stderr)
        start = read_records(self.records)[0]
        self.assertEqual(start["kind"], "start")
        self.assertEqual(start["signal"], signal.SIGUSR1)
        self.assertFalse(start["request_file"])

    def test_request_file_instead_of_a_signal(self):
        request = os.path.join(self.tmp.name, "save-request")
        r = run_job("""
            import time, headroom
            headroom.on_save(lambda s: "saved-%%d" %% s)
            for i in range(8):
                if i == 2:
                    open(%r, "w").close()   # as the guard writes it
                headroom.step(i)
                time.sleep(0.1)   # the file is looked at every 0.25 s
        """ % request, {"HEADROOM_STEP_RECORDS": self.records,
                        "HEADROOM_CHECKPOINT_SIGNAL": "none",
                        "HEADROOM_CHECKPOINT_REQUEST": request})
        self.assertEqual(r.returncode, 0, r.stderr)
        recs = read_records(self.records)
        self.assertIsNone(recs[0]["signal"])
        self.assertTrue(recs[0]["request_file"])
        ends = [x for x in recs if x["kind"] == "save_end"]
        self.assertEqual(len(ends), 1)
        self.assertIn(ends[0]["step"], (2, 3, 4))  # within a quarter second of the request
        self.assertEqual(ends[0]["path"], "saved-%d" % ends[0]["step"])
        self.assertFalse(os.path.exists(request))  # taken

    def test_no_save_function_says_so(self):
        r = run_job("""
            import os, signal, headroom
            headroom.step(0)
            os.kill(os.getpid(), signal.SIGUSR1)
            headroom.step(1)
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        end = [x for x in read_records(self.records) if x["kind"] == "save_end"]
        self.assertEqual(len(end), 1)
        self.assertFalse(end[0]["ok"])
        self.assertIn("on_save", end[0]["error"])

    def test_the_jobs_own_handler_still_runs(self):
        r = run_job("""
            import os, signal, headroom
            seen = []
            signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
            headroom.on_save(lambda s: None)
            headroom.step(0)
            os.kill(os.getpid(), signal.SIGUSR1)
            print(headroom.step(1), seen)
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "True [%d]" % signal.SIGUSR1)

    def test_a_forked_child_writes_nothing(self):
        r = run_job("""
            import os, headroom
            headroom.step(0)
            pid = os.fork()
            if pid == 0:
                headroom.step(99)
                os._exit(0)
            os.waitpid(pid, 0)
            headroom.step(1)
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        steps = [x["step"] for x in read_records(self.records) if x["kind"] == "step"]
        self.assertEqual(steps, [0, 1])

    def test_unwritable_records_never_end_the_job(self):
        r = run_job("""
            import headroom
            for i in range(3):
                headroom.step(i)
            print("ran")
        """, {"HEADROOM_STEP_RECORDS": os.path.join(self.tmp.name, "no", "such", "dir", "x")})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ran")
        self.assertIn("headroom: step records: cannot open", r.stderr)

    def test_a_save_function_of_no_argument_is_called_without_one(self):
        # The natural way to register a save: a lambda of nothing. Decided once, at
        # registration, from its signature; fn(step) stays what a one-argument function gets.
        ckpt = os.path.join(self.tmp.name, "ckpt.pt")
        r = run_job("""
            import os, signal, torch, headroom
            state = {"w": torch.zeros(2)}
            headroom.on_save(lambda: torch.save(state, %r))
            saved = []
            for i in range(4):
                if i == 1:
                    os.kill(os.getpid(), signal.SIGUSR1)
                saved.append(headroom.step(i))
            print(saved)
            import functools
            calls = []
            class Saver:
                def __call__(self):
                    calls.append("call")
            for fn, want in ((lambda: 0, False), (lambda s: 0, True), (lambda *a: 0, True),
                             (lambda s=0: 0, True), (Saver(), False), (max, True),
                             (functools.partial(lambda a, b: 0, 1), True)):
                assert headroom._takes_step(fn) is want, (fn, want)
        """ % ckpt, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "[False, True, False, False]")
        self.assertEqual(r.stderr, "")
        end = [x for x in read_records(self.records) if x["kind"] == "save_end"]
        self.assertEqual(len(end), 1)
        self.assertTrue(end[0]["ok"], end[0])
        self.assertIsNone(end[0]["error"])
        self.assertTrue(os.path.exists(ckpt))

    def test_a_save_that_raises_is_recorded_and_the_loop_goes_on(self):
        r = run_job("""
            import os, signal, headroom
            def save(step):
                raise OSError("disk full")
            headroom.on_save(save)
            saved = []
            for i in range(6):
                if i in (1, 3):
                    os.kill(os.getpid(), signal.SIGUSR1)
                saved.append(headroom.step(i))
            print(saved)
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "[False, False, False, False, False, False]")
        # One line for the failure, not one per request, and no traceback.
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("step 1 failed: OSError: disk full", r.stderr)
        self.assertIn("goes on", r.stderr)
        recs = read_records(self.records)
        self.assertEqual([x["step"] for x in recs if x["kind"] == "step"], list(range(6)))
        ends = [x for x in recs if x["kind"] == "save_end"]
        self.assertEqual([(x["step"], x["ok"], x["error"], x["path"]) for x in ends],
                         [(1, False, "OSError: disk full", None),
                          (3, False, "OSError: disk full", None)])

    def test_a_long_save_error_keeps_its_record_under_the_readers_line_limit(self):
        r = run_job("""
            import os, signal, headroom
            def save(step):
                raise RuntimeError("x" * 100000)
            headroom.on_save(save)
            os.kill(os.getpid(), signal.SIGUSR1)
            headroom.step(0)
        """, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.records) as f:
            lines = f.read().splitlines()
        self.assertLess(max(len(x) for x in lines), 16 * 1024)  # companion_records.h's limit
        end = json.loads(lines[-1])
        self.assertFalse(end["ok"])
        self.assertTrue(end["error"].startswith("RuntimeError: xxx"))

    def test_a_fifo_as_the_records_file_never_hangs_the_job(self):
        fifo = os.path.join(self.tmp.name, "records.fifo")
        os.mkfifo(fifo)
        job = """
            import headroom
            for i in range(3):
                headroom.step(i)
            print("ran")
        """
        # No reader: a blocking open would wait for one forever.
        r = run_job(job, {"HEADROOM_STEP_RECORDS": fifo}, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ran")
        self.assertEqual(r.stderr.strip(),
                         "headroom: step records: %s is a FIFO, not a regular file: the job "
                         "runs without records" % fifo)
        # A reader that never reads: the open succeeds, and the FIFO is still refused.
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            r = run_job(job, {"HEADROOM_STEP_RECORDS": fifo}, timeout=30)
        finally:
            os.close(reader)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ran")
        self.assertIn("is a FIFO, not a regular file", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        # A character device too (nothing is written to it).
        r = run_job(job, {"HEADROOM_STEP_RECORDS": "/dev/null"}, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("/dev/null is a character device", r.stderr)

    def test_trainer_callback_against_the_documented_interface(self):
        # A fake of transformers' callback interface: TrainerControl's flags, TrainerState's
        # global_step, and trainer.py's order: on_step_end, then (should_save) the save and
        # on_save, with DefaultFlowCallback setting should_save every save_steps first.
        out = os.path.join(self.tmp.name, "out")
        r = run_job("""
            import os, signal, headroom
            from headroom.trainer import HeadroomCallback
            class Control:
                should_save = False
            class State:
                global_step = 0
                num_input_tokens_seen = 0
            class Args:
                output_dir = %r
            cb, args, state, control = HeadroomCallback(), Args(), State(), Control()
            cb.on_train_begin(args, state, control)
            saves = []
            for step in range(1, 9):
                state.global_step = step
                state.num_input_tokens_seen += 100
                if step == 3:
                    os.kill(os.getpid(), signal.SIGUSR1)
                cb.on_log(args, state, control, logs={"loss": 1.0 / step, "learning_rate": 2e-5})
                control.should_save = step %% 5 == 0        # DefaultFlowCallback, save_steps=5
                control = cb.on_step_end(args, state, control)
                if control.should_save:
                    saves.append(step)
                    os.makedirs(os.path.join(args.output_dir, "checkpoint-%%d" %% step))
                    control = cb.on_save(args, state, control)
                    control.should_save = False
            print(saves)
        """ % out, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "[3, 5]")
        recs = read_records(self.records)
        self.assertEqual(recs[0]["framework"], "transformers")
        steps = [x for x in recs if x["kind"] == "step"]
        self.assertEqual(steps[1]["tokens"], 200)
        self.assertAlmostEqual(steps[1]["loss"], 0.5)
        self.assertEqual(steps[1]["lr"], 2e-5)
        ends = [(x["step"], x["reason"], x["path"]) for x in recs if x["kind"] == "save_end"]
        self.assertEqual(ends, [(3, "guard", os.path.join(out, "checkpoint-3")),
                                (5, "scheduled", os.path.join(out, "checkpoint-5"))])
        saves = [x["source"] for x in recs if x["kind"] in ("save_start", "save_end")]
        self.assertEqual(saves, ["transformers"] * 4)

    def test_lightning_callback_against_the_documented_interface(self):
        import torch
        folder = self.tmp.name
        r = run_job("""
            import os, signal, torch, headroom
            from headroom.lightning import HeadroomLightningCallback
            class Trainer:
                default_root_dir = %r
                global_step = 0
                def __init__(self):
                    self.model = torch.nn.Linear(2, 2)
                    self.optimizers = [torch.optim.SGD(self.model.parameters(), lr=0.01)]
                def save_checkpoint(self, filepath):
                    torch.save({"global_step": self.global_step,
                                "state_dict": self.model.state_dict()}, filepath)
            t, cb = Trainer(), HeadroomLightningCallback()
            cb.on_train_start(t, None)
            for i in range(6):
                t.global_step = i + 1
                if i == 2:
                    os.kill(os.getpid(), signal.SIGUSR1)
                cb.on_train_batch_end(t, None, {"loss": torch.tensor(0.25)}, None, i)
        """ % folder, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        recs = read_records(self.records)
        self.assertEqual(recs[0]["framework"], "lightning")
        step = [x for x in recs if x["kind"] == "step"][0]
        self.assertEqual(step["loss"], 0.25)
        self.assertEqual(step["lr"], 0.01)
        ends = [x for x in recs if x["kind"] == "save_end"]
        self.assertEqual(len(ends), 1)
        path = os.path.join(folder, "headroom-step3.ckpt")
        self.assertEqual(ends[0]["path"], path)
        self.assertEqual(ends[0]["source"], "lightning")
        self.assertEqual(torch.load(path)["global_step"], 3)

    def test_lightning_save_that_raises_never_ends_the_run(self):
        r = run_job("""
            import os, signal, headroom
            from headroom.lightning import HeadroomLightningCallback
            class Trainer:
                default_root_dir = %r
                global_step = 0
                optimizers = []
                def save_checkpoint(self, filepath):
                    raise OSError("disk full")
            t, cb = Trainer(), HeadroomLightningCallback()
            cb.on_train_start(t, None)
            for i in range(4):
                t.global_step = i + 1
                if i == 1:
                    os.kill(os.getpid(), signal.SIGUSR1)
                cb.on_train_batch_end(t, None, {"loss": 0.5}, None, i)
            print("trained")
        """ % self.tmp.name, {"HEADROOM_STEP_RECORDS": self.records})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "trained")
        self.assertIn("step 2 failed: OSError: disk full", r.stderr)
        ends = [x for x in read_records(self.records) if x["kind"] == "save_end"]
        self.assertEqual([(x["ok"], x["error"], x["source"]) for x in ends],
                         [(False, "OSError: disk full", "lightning")])

    def test_trainer_save_that_raises_never_ends_the_run(self):
        # A stand-in transformers package whose Trainer saves as trainer.py does: on_step_end,
        # then, when control.should_save, _save_checkpoint and on_save.
        fake = self.fake_transformers("""
                class _Handler:
                    def __init__(self, callbacks):
                        self.callbacks = list(callbacks)
                    def call(self, event, args, state, control):
                        for c in self.callbacks:
                            control = getattr(c, event)(args, state, control) or control
                        return control
                class Control:
                    should_save = False
                class State:
                    global_step = 0
                class Args:
                    output_dir = "out"
                class Trainer:
                    def __init__(self, callbacks=(), save_steps=0):
                        self.callback_handler = _Handler(callbacks)
                        self.save_steps = save_steps
                    def _save_checkpoint(self, model, trial):
                        raise OSError("disk full")
                    def train(self, steps, request_at):
                        import os, signal
                        args, state, control = Args(), State(), Control()
                        h = self.callback_handler
                        control = h.call("on_train_begin", args, state, control)
                        for step in range(1, steps + 1):
                            state.global_step = step
                            if step == request_at:
                                os.kill(os.getpid(), signal.SIGUSR1)
                            control.should_save = bool(self.save_steps) and \\
                                step % self.save_steps == 0
                            control = h.call("on_step_end", args, state, control)
                            if control.should_save:
                                self._save_checkpoint(None, None)
                                control = h.call("on_save", args, state, control)
                                control.should_save = False
                        return state.global_step
            """)
        env = {"HEADROOM_STEP_RECORDS": self.records,
               "PYTHONPATH": PACKAGE_DIR + os.pathsep + fake}
        r = run_job("""
            from transformers.trainer import Trainer
            from headroom.trainer import HeadroomCallback
            print(Trainer(callbacks=[HeadroomCallback()]).train(6, request_at=2))
        """, env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "6")  # every step ran
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("step 2 failed: OSError: disk full", r.stderr)
        ends = [x for x in read_records(self.records) if x["kind"] == "save_end"]
        self.assertEqual([(x["step"], x["reason"], x["ok"], x["error"], x["path"])
                          for x in ends], [(2, "guard", False, "OSError: disk full", None)])
        # A save of the Trainer's own schedule that raises is recorded and raises as it would
        # without headroom: that schedule is the job's.
        os.unlink(self.records)
        r = run_job("""
            from transformers.trainer import Trainer
            from headroom.trainer import HeadroomCallback
            Trainer(callbacks=[HeadroomCallback()], save_steps=3).train(6, request_at=0)
        """, env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("OSError: disk full", r.stderr)
        ends = [x for x in read_records(self.records) if x["kind"] == "save_end"]
        self.assertEqual([(x["step"], x["reason"], x["ok"]) for x in ends],
                         [(3, "scheduled", False)])

    def test_callbacks_import_without_their_libraries(self):
        r = run_job("""
            import headroom.trainer, headroom.lightning, headroom._hooks
            print(headroom.trainer.HeadroomCallback.__mro__[1].__name__,
                  headroom.lightning.HeadroomLightningCallback.__mro__[1].__name__)
        """, {})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["object", "object"])

    def test_hooks_add_the_callback_to_a_trainer(self):
        # A stand-in transformers package with a Trainer keeping TrainerCallbacks as
        # transformers' CallbackHandler does (callback_handler.callbacks, add_callback).
        fake = self.fake_transformers("""
                class _Handler:
                    def __init__(self):
                        self.callbacks = []
                class Trainer:
                    def __init__(self, callbacks=None):
                        self.callback_handler = _Handler()
                        for c in callbacks or []:
                            self.add_callback(c)
                    def add_callback(self, c):
                        self.callback_handler.callbacks.append(c)
            """)
        r = run_job("""
            import headroom._hooks
            headroom._hooks.install()
            from transformers.trainer import Trainer
            from headroom.trainer import HeadroomCallback
            t = Trainer()
            t2 = Trainer(callbacks=[HeadroomCallback()])
            print(len(t.callback_handler.callbacks), len(t2.callback_handler.callbacks),
                  type(t.callback_handler.callbacks[0]).__mro__[1].__name__)
        """, {"HEADROOM_STEP_RECORDS": self.records,
              "PYTHONPATH": PACKAGE_DIR + os.pathsep + fake})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["1", "1", "TrainerCallback"])
        self.assertEqual(read_records(self.records)[0]["framework"], "hooks")


if __name__ == "__main__":
    unittest.main()
