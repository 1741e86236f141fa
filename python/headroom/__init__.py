"""headroom's companion inside a training job (docs/companion.md).

Two calls for a plain loop:

    import headroom
    headroom.on_save(lambda step: save_my_checkpoint(step))   # returns the path, if any
    # (or a function of no argument: headroom.on_save(lambda: torch.save(state, path)))
    for step in range(steps):
        ...
        headroom.step(step, tokens=n_tokens, loss=loss.item())

`step` appends a step record (JSON lines, schema "headroom.step/1") to the file that
`headroom guard`, `watch` or `sweep` name in HEADROOM_STEP_RECORDS, and, when the guard has
asked for a checkpoint before the kill (SIGUSR1 by default, or its request file), calls the
registered save function at the end of this step, between "save_start" and "save_end"
records. A save that raises is recorded (ok false, with the error), said once on stderr, and
the training goes on: the guard asked for a save to keep the work, never to end the run.
Without HEADROOM_STEP_RECORDS both calls cost almost nothing and write nothing.

The Transformers Trainer callback is headroom.trainer.HeadroomCallback, the Lightning one
headroom.lightning.HeadroomLightningCallback. Standard library only; torch's allocator figures
are read when the job has imported torch itself. Python 3.9 or later.
"""
import os
import signal as _signal
import sys
import threading
import time

from headroom._records import SCHEMA, NotRegularFile, RecordWriter

__all__ = ["step", "on_save", "configure", "save_requested", "SCHEMA"]
__version__ = "0.1.0"

# The environment the guard, watch and sweep set for the job (docs/companion.md).
ENV_RECORDS = "HEADROOM_STEP_RECORDS"
ENV_EVERY = "HEADROOM_STEP_EVERY"
ENV_SIGNAL = "HEADROOM_CHECKPOINT_SIGNAL"
ENV_REQUEST = "HEADROOM_CHECKPOINT_REQUEST"
# How often the request file is looked at (seconds): the guard's projection leaves at least a
# save's duration, and a quarter second of it is the price of not probing every step.
REQUEST_CHECK_S = 0.25


class _State:
    def __init__(self):
        self.ready = False
        self.writer = None
        self.every = 1
        self.count = 0
        self.save_fn = None
        self.save_takes_step = True  # on_save's function is called fn(step), else fn()
        self.said = set()  # the failed saves already said on stderr (one line each)
        self.framework = None  # "transformers", "lightning" once a callback has claimed saves
        self.requested = False  # set by the signal handler or the request file
        self.request_file = None
        self.next_request_check = 0.0  # monotonic time of the next look at the request file
        self.signal_installed = None

    def ensure(self, framework="plain"):
        if self.ready:
            return self.writer is not None
        self.ready = True
        path = os.environ.get(ENV_RECORDS)
        if not path:
            return False
        try:
            every = int(os.environ.get(ENV_EVERY, "1"))
        except ValueError:
            every = 1
        self.every = max(1, every)
        rank = os.environ.get("RANK")
        try:
            self.writer = RecordWriter(path, int(rank) if rank and rank.isdigit() else None)
        except NotRegularFile as e:
            sys.stderr.write("headroom: step records: %s: the job runs without records\n" % (e,))
            return False
        except OSError as e:
            sys.stderr.write("headroom: step records: cannot open %s: %s\n" % (path, e))
            return False
        self.request_file = os.environ.get(ENV_REQUEST) or None
        self._install_signal()
        self.writer.start(framework, self.signal_installed, self.request_file)
        return True

    def _install_signal(self):
        name = os.environ.get(ENV_SIGNAL, "SIGUSR1")
        if name.lower() == "none":
            return
        try:
            signum = int(name) if name.isdigit() else int(getattr(_signal, name))
        except (AttributeError, ValueError):
            return
        if threading.current_thread() is not threading.main_thread():
            return  # signal.signal works only there; the request file still does
        try:
            previous = _signal.getsignal(signum)
        except ValueError:
            return

        def handler(sig, frame):
            self.requested = True
            if callable(previous):
                previous(sig, frame)  # the job's own handler still runs

        try:
            _signal.signal(signum, handler)
            self.signal_installed = signum
        except (OSError, ValueError):
            pass

    def take_request(self):
        """True once per request: the guard's signal, or its request file (removed here).

        The file is looked at every REQUEST_CHECK_S at most: a failed unlink is a system call
        that a loop of short steps would otherwise pay every step (bench/companion_step.py).
        """
        if self.request_file is not None:
            now = time.monotonic()
            if now >= self.next_request_check:
                self.next_request_check = now + REQUEST_CHECK_S
                try:
                    os.unlink(self.request_file)
                    self.requested = True
                except OSError:
                    pass
        if self.requested:
            self.requested = False
            if self.request_file is not None:  # one request, whichever way it came
                try:
                    os.unlink(self.request_file)
                except OSError:
                    pass
            return True
        return False

    def record_step(self, step_value, tokens, loss, lr):
        self.count += 1
        if self.count % self.every == 0 or self.count == 1:
            self.writer.step(step_value, tokens, loss, lr)

    def run_save(self, step_value, reason, fn, source="loop"):
        """Runs fn(step) between save_start and save_end records; True when it returned.

        `source` says in the records what wrote the checkpoint ("loop": on_save's function).
        A save that raises never ends the job: the failure is recorded (ok false, the
        error), said once on stderr, and False returned; the training goes on.
        """
        self.writer.save_start(step_value, reason, source)
        t0 = time.monotonic()
        try:
            path = fn(step_value)
        except Exception as e:
            error = "%s: %s" % (type(e).__name__, e)
            self.writer.save_end(step_value, reason, time.monotonic() - t0, None, False, error,
                                 source)
            self.say_failed(step_value, error)
            return False
        self.writer.save_end(step_value, reason, time.monotonic() - t0, path, True, None, source)
        return True

    def say_failed(self, step_value, error):
        """One line on stderr for a failed save; the same error again is not repeated."""
        if error in self.said:
            return
        self.said.add(error)
        try:
            sys.stderr.write("headroom: the checkpoint save at step %s failed: %s; the training "
                             "goes on (the step records say ok false)\n" % (step_value, error))
        except (OSError, ValueError):
            pass  # a closed stderr must not end the job either


_state = _State()


def configure(every=None):
    """Write one step record every `every` steps (default: HEADROOM_STEP_EVERY, else 1)."""
    _state.ensure()
    if every is not None:
        _state.every = max(1, int(every))


def _takes_step(fn):
    """Whether fn is called fn(step) (else fn()), decided once from its signature.

    fn(step) when it accepts one positional argument, fn() when it accepts none; a callable
    without a signature (some builtins) or that accepts neither gets the documented fn(step),
    and what it raises is then recorded like any failed save.
    """
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for args in ((0,), ()):
        try:
            sig.bind(*args)
            return bool(args)
        except TypeError:
            pass
    return True


def on_save(fn):
    """Registers the loop's own checkpoint save: fn(step) or fn(), returning the path or None.

    Which of the two is decided here, from fn's signature. Returns fn.
    """
    _state.save_takes_step = _takes_step(fn)
    _state.save_fn = fn
    _state.ensure()
    return fn


def save_requested():
    """Whether the guard has asked for a checkpoint that has not been taken yet."""
    return _state.requested


def step(step, tokens=None, loss=None, lr=None):
    """Records the end of one step; saves (on_save's function) when the guard asked.

    Returns True when this call saved a checkpoint (False when the save raised: recorded).
    """
    st = _state
    if st.writer is None and (st.ready or not st.ensure()):
        return False
    st.record_step(step, tokens, loss, lr)
    if (st.requested or st.request_file is not None) and st.take_request():
        if st.save_fn is None:
            st.writer.save_end(step, "guard", 0.0, None, False,
                               "no save function (headroom.on_save) registered", "loop")
            return False
        fn = st.save_fn if st.save_takes_step else (lambda _step, f=st.save_fn: f())
        return st.run_save(step, "guard", fn)
    return False
