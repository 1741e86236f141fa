"""The Transformers Trainer callback (TRL's trainers inherit Trainer, so it serves them too).

    from headroom.trainer import HeadroomCallback
    trainer = Trainer(..., callbacks=[HeadroomCallback()])

It writes a step record at every optimizer step (on_step_end, with the loss and learning rate
of the latest on_log), times the Trainer's own checkpoints (save_start when on_step_end sees
control.should_save set by the flow callback, save_end at on_save), and, when the guard asks
for a checkpoint before the kill, sets control.should_save so the Trainer saves at the end of
this step, into output_dir/checkpoint-<global_step>.

The hooks follow the Trainer's documented callback interface (transformers
src/transformers/trainer_callback.py, TrainerCallback and TrainerControl; trainer.py calls
on_step_end, then _maybe_log_save_evaluate, which saves when control.should_save and then
calls on_save). Importing this module never needs transformers: without it the class is a
plain object with the same methods.
"""
import os
import time

import headroom

try:
    from transformers import TrainerCallback as _Base
except Exception:  # not installed, or broken: the callback stays importable
    _Base = object

# transformers.trainer_utils.PREFIX_CHECKPOINT_DIR
_CHECKPOINT_PREFIX = "checkpoint"


class HeadroomCallback(_Base):
    def __init__(self):
        self._state = headroom._state
        self._loss = None
        self._lr = None
        self._save = None  # (step, reason, monotonic start) of a save under way

    def _active(self):
        st = self._state
        if st.writer is None and not st.ready:
            st.ensure("transformers")
        return st.writer is not None

    def on_train_begin(self, args, state, control, **kwargs):
        if self._active():
            self._state.framework = "transformers"
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
        path = os.path.join(getattr(args, "output_dir", "") or "",
                            "%s-%d" % (_CHECKPOINT_PREFIX, state.global_step))
        self._state.writer.save_end(step, reason, time.monotonic() - t0, path, True, None,
                                    "transformers")
        return control
