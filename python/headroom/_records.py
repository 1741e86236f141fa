# The step-record writer (docs/companion.md, "Step records").
#
# One JSON object per line, appended with one os.write on an O_APPEND descriptor, so that
# lines from several ranks sharing one file never interleave (an O_APPEND write moves the
# offset and writes as one step) and the guard, reading the file as the job runs, sees each
# line as soon as it is written (no Python-side buffer).
#
# Lines are formatted by hand rather than by json.dumps: the step line is the one written
# every step, and the hand-made format takes about a third of json.dumps's time
# (bench/companion_step_bench.py). Every value written this way is a number, null, true or
# false, or a string passed through json.dumps (paths, reasons), so the line is always JSON.
import errno
import fcntl
import json
import math
import os
import stat
import sys
import time

SCHEMA = "headroom.step/1"

try:
    import resource as _resource
except ImportError:  # not on Linux: no host peak
    _resource = None


def _num(value):
    """A JSON number, or null; non-finite floats as the strings "nan", "inf", "-inf"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    try:
        f = float(value)
    except (TypeError, ValueError):
        return "null"
    if math.isfinite(f):
        return repr(f)
    return '"nan"' if math.isnan(f) else ('"inf"' if f > 0 else '"-inf"')


class _TorchMemory:
    """The torch allocator's figures, without importing torch or starting CUDA itself."""

    def __init__(self):
        self._cuda = None  # torch.cuda once it is known to be usable

    def read(self):
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        cuda = self._cuda
        if cuda is None:
            cuda = getattr(torch, "cuda", None)
            # is_initialized: never be the one that starts CUDA (it takes memory and seconds).
            if cuda is None or not cuda.is_initialized():
                return None
            self._cuda = cuda
        try:
            return (cuda.memory_allocated(), cuda.memory_reserved(), cuda.max_memory_allocated())
        except Exception:
            return None


# Longest error text kept in a save_end record: the C++ reader drops a line over 16 KiB
# (src/samples/companion_records.h), and an exception's text has no bound of its own.
MAX_ERROR_CHARS = 1000

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


class NotRegularFile(OSError):
    """HEADROOM_STEP_RECORDS names something other than a regular file."""

    def __str__(self):
        return "%s is %s, not a regular file" % (self.filename, self.strerror)


def _not_regular(path, mode):
    kind = next((name for test, name in _KINDS if test(mode)), "something else")
    return NotRegularFile(errno.EINVAL, kind, path)


def _open_regular(path):
    """An O_APPEND descriptor on a regular file, or OSError: never a hang.

    Opened non-blocking: a FIFO with no reader would otherwise block the job at its first
    step (open(2) waits for a reader), and one with a reader would block a write when full.
    Anything but a regular file is refused (fstat after the open, so no race with a rename).
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO (or socket) with no reader
            try:
                raise _not_regular(path, os.stat(path).st_mode) from None
            except FileNotFoundError:
                pass
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        # A regular file never blocks; the flag is cleared so that writes are plain ones.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


class RecordWriter:
    def __init__(self, path, rank=None):
        self.path = path
        self.rank = rank
        self.fd = _open_regular(path)
        self.pid = os.getpid()
        self._torch = _TorchMemory()
        # The constant head of every line.
        self._head = '{"schema":"%s","pid":%d,"rank":%s' % (SCHEMA, self.pid, _num(rank))

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _write(self, body):
        if self.fd < 0:
            return
        if os.getpid() != self.pid:  # a forked child (a DataLoader worker): not the trainer
            return
        try:
            os.write(self.fd, (self._head + body + "}\n").encode())
        except OSError:
            pass  # a full disk must never end the job; the guard sees the records stop

    def _memory(self):
        mem = self._torch.read()
        host = _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss * 1024 if _resource else None
        if mem is None:
            return ',"allocated_bytes":null,"reserved_bytes":null,"peak_allocated_bytes":null,' \
                   '"host_peak_rss_bytes":%s' % _num(host)
        return ',"allocated_bytes":%d,"reserved_bytes":%d,"peak_allocated_bytes":%d,' \
               '"host_peak_rss_bytes":%s' % (mem[0], mem[1], mem[2], _num(host))

    def start(self, framework, signum, request_file):
        # `signal`: the signal this process handles as a save request (null: none, so the
        # guard must not send it); `request_file`: whether it also watches the request file.
        self._write(',"kind":"start","wall":%r,"mono":%r,"framework":%s,"signal":%s,'
                    '"request_file":%s'
                    % (time.time(), time.monotonic(), json.dumps(framework), _num(signum),
                       _num(bool(request_file))))

    def step(self, step, tokens=None, loss=None, lr=None):
        self._write(',"kind":"step","step":%s,"wall":%r,"mono":%r,"tokens":%s,"loss":%s,"lr":%s%s'
                    % (_num(step), time.time(), time.monotonic(), _num(tokens), _num(loss),
                       _num(lr), self._memory()))

    # `source` on save_start and save_end: what wrote the checkpoint, so a reader can say
    # how to resume from it: "transformers" (the Trainer callback, TRL's trainers too),
    # "lightning" (the Lightning callback) or "loop" (headroom.on_save's function). An
    # optional key of headroom.step/1: readers that do not know it skip it.
    def save_start(self, step, reason, source=None):
        self._write(',"kind":"save_start","step":%s,"wall":%r,"mono":%r,"reason":%s,"source":%s'
                    % (_num(step), time.time(), time.monotonic(), json.dumps(reason),
                       json.dumps(source)))

    def save_end(self, step, reason, duration_s, path, ok, error=None, source=None):
        if error is not None and len(error) > MAX_ERROR_CHARS:
            error = error[:MAX_ERROR_CHARS] + "..."
        self._write(',"kind":"save_end","step":%s,"wall":%r,"mono":%r,"reason":%s,'
                    '"duration_s":%s,"path":%s,"ok":%s,"error":%s,"source":%s'
                    % (_num(step), time.time(), time.monotonic(), json.dumps(reason),
                       _num(duration_s), json.dumps(None if path is None else str(path)),
                       _num(bool(ok)), json.dumps(error), json.dumps(source)))
