"""The Transformers Trainer callback (TRL's trainers inherit Trainer, so it serves them too).

    from headroom.trainer import HeadroomCallback
    trainer = Trainer(..., callbacks=[HeadroomCallback()])

It writes a step record at every optimizer step (on_step_end, with the loss and learning rate
of the latest on_log), times the Trainer's own checkpoints (save_start when on_step_end sees
control.should_save set by the flow callback, save_end at on_save), and, when the guard asks
for a checkpoint before the kill, sets control.should_save so the Trainer saves at the end of
this step, into output_dir/checkpoint-<global_step>.

A save the guard asked for never ends the run: at on_train_begin the Trainer class's
_save_checkpoint (the method _maybe_log_save_evaluate calls when control.should_save) is
wrapped once, so that when it raises during a save this callback asked for, the error is
recorded (save_end ok false), said once on stderr, and the training goes on. A scheduled save
that raises is recorded too and raises as it would without headroom: that schedule is the
job's own.

The hooks follow the Trainer's documented callback interface (transformers
src/transformers/trainer_callback.py, TrainerCallback and TrainerControl; trainer.py calls
on_step_end, then _maybe_log_save_evaluate, which saves when control.should_save and then
calls on_save). Importing this module never needs transformers: without it the class is a
plain object with the same methods.
"""
import os
import sys
import time

import headroom

try:
    from transformers import TrainerCallback as _Base
except Exception:  # not installed, or broken: the callback stays importable
    _Base = object

# transformers.trainer_utils.PREFIX_CHECKPOINT_DIR
_CHECKPOINT_PREFIX = "checkpoint"


def _ours(trainer):
    """The HeadroomCallback among trainer's callbacks with a save under way, or None."""
    try:
        callbacks = trainer.callback_handler.callbacks
    except AttributeError:
        return None
    for cb in callbacks:
        if isinstance(cb, HeadroomCallback) and cb._save is not None:
            return cb
    return None


def _guard_saves(trainer_cls):
    """Wraps trainer_cls._save_checkpoint (once) as the module docstring says."""
    original = getattr(trainer_cls, "_save_checkpoint", None)
    if original is None or getattr(original, "_headroom_wrapped", False):
        return

    def _save_checkpoint(self, *args, **kwargs):
        cb = _ours(self)
        if cb is None:
            return original(self, *args, **kwargs)
        try:
            return original(self, *args, **kwargs)
        except Exception as e:
            step, reason, t0 = cb._save
            error = "%s: %s" % (type(e).__name__, e)
            if reason != "guard":
                cb._save = None
                cb._state.writer.save_end(step, reason, time.monotonic() - t0, None, False, error,
                                          "transformers")
                raise
            cb._failed = error  # on_save, which the Trainer calls next, records it
            return None

    _save_checkpoint._headroom_wrapped = True
    trainer_cls._save_checkpoint = _save_checkpoint


class HeadroomCallback(_Base):
    def __init__(self):
        self._state = headroom._state
        self._loss = None
        self._lr = None
        self._save = None  # (step, reason, monotonic start) of a save under way
        self._failed = None  # the error of a guard-asked save that raised

    def _active(self):
        st = self._state
        if st.writer is None and not st.ready:
            st.ensure("transformers")
        return st.writer is not None

    def on_train_begin(self, args, state, control, **kwargs):
        if self._active():
            self._state.framework = "transformers"
            module = sys.modules.get("transformers.trainer")
            try:
                _guard_saves(getattr(module, "Trainer", None))
            except Exception as e:  # never break the job over its records
                sys.stderr.write("headroom: Trainer saves not guarded: %s\n" % (e,))
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs:
            self._loss = logs.get("loss", self._loss)
            self._lr = logs.get("learning_rate", self._lr)
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if not self._active():
            return control
        st = self._state
        step = state.global_step
        tokens = getattr(state, "num_input_tokens_seen", None) or None
        st.record_step(step, tokens, self._loss, self._lr)
        reason = None
        if st.take_request():
            control.should_save = True
            reason = "guard"
        elif getattr(control, "should_save", False):
            reason = "scheduled"
        if reason is not None:
            st.writer.save_start(step, reason, "transformers")
            self._save = (step, reason, time.monotonic())
        return control

    def on_save(self, args, state, control, **kwargs):
        if self._save is None or not self._active():
            return control
        step, reason, t0 = self._save
        self._save = None
        failed, self._failed = self._failed, None
        if failed is not None:
            self._state.writer.save_end(step, reason, time.monotonic() - t0, None, False, failed,
                                        "transformers")
            self._state.say_failed(step, failed)
            return control
        path = os.path.join(getattr(args, "output_dir", "") or "",
                            "%s-%d" % (_CHECKPOINT_PREFIX, state.global_step))
        self._state.writer.save_end(step, reason, time.monotonic() - t0, path, True, None,
                                    "transformers")
        return control
