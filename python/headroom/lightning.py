"""The PyTorch Lightning callback.

    from headroom.lightning import HeadroomLightningCallback
    trainer = lightning.Trainer(..., callbacks=[HeadroomLightningCallback()])

A step record at every training batch's end (on_train_batch_end, with the loss from the
step's outputs and the first optimizer's learning rate), and, when the guard asks for a
checkpoint before the kill, trainer.save_checkpoint(<dirpath>/headroom-step<N>.ckpt) at the
end of that batch, between save_start and save_end records; `dirpath` defaults to the
trainer's default_root_dir.

The hooks follow Lightning's documented Callback interface (lightning
src/lightning/pytorch/callbacks/callback.py: on_train_batch_end(trainer, pl_module, outputs,
batch, batch_idx); Trainer.save_checkpoint(filepath)). It subclasses lightning.pytorch's
Callback, else pytorch_lightning's, else a plain object (importable without either).
"""
import os

import headroom

try:
    from lightning.pytorch import Callback as _Base
except Exception:
    try:
        from pytorch_lightning import Callback as _Base
    except Exception:
        _Base = object


def _loss_of(outputs):
    loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
    try:
        return float(loss.detach()) if hasattr(loss, "detach") else (
            None if loss is None else float(loss))
    except (TypeError, ValueError):
        return None


def _lr_of(trainer):
    try:
        return trainer.optimizers[0].param_groups[0]["lr"]
    except Exception:
        return None


class HeadroomLightningCallback(_Base):
    def __init__(self, dirpath=None):
        self._state = headroom._state
        self.dirpath = dirpath

    def _active(self):
        st = self._state
        if st.writer is None and not st.ready:
            st.ensure("lightning")
        return st.writer is not None

    def on_train_start(self, trainer, pl_module):
        if self._active():
            self._state.framework = "lightning"

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not self._active():
            return
        st = self._state
        step = getattr(trainer, "global_step", batch_idx)
        st.record_step(step, None, _loss_of(outputs), _lr_of(trainer))
        if not st.take_request():
            return
        folder = self.dirpath or getattr(trainer, "default_root_dir", None) or os.getcwd()
        path = os.path.join(folder, "headroom-step%d.ckpt" % step)

        def save(_step):
            trainer.save_checkpoint(path)
            return path

        st.run_save(step, "guard", save, "lightning")
