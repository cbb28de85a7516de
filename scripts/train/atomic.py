"""The training tools' one way to write a file, the rule src/engine/fileio.c
follows for attnlab's own outputs: a temporary with a random name made with
O_EXCL beside the target (a link planted there is never followed), written,
given the replaced file's mode (a new one: 0666 less the umask), synced,
renamed over the target (a link at the target is followed, so the file it
names is replaced and the link stays), then the folder synced. Stopped half
way (an exception, Ctrl-C, SIGTERM), it removes its temporary and the target
stays as it was.

    with atomic.open_out(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    atomic.write_json(path, obj, indent=1)
"""
import contextlib
import json
import os
import signal
import stat
import tempfile
import threading


def _umask():
    # read, not set and put back: os.umask would race with other threads
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _mode_for(target):
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


class _Terminated(BaseException):
    """SIGTERM turned into an exception while a temporary is open."""


@contextlib.contextmanager
def _term_raises():
    # Python dies of SIGTERM without running finally blocks: while writing,
    # make it an exception, then die of the signal as the process would have.
    main = threading.current_thread() is threading.main_thread()
    old = signal.getsignal(signal.SIGTERM) if main else None
    if old != signal.SIG_DFL:
        yield
        return

    def raise_(signum, frame):
        raise _Terminated()

    signal.signal(signal.SIGTERM, raise_)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def open_out(path, mode="w", **kwargs):
    """A file object for writing path as a whole; mode is "w" or "wb"."""
    if mode not in ("w", "wb"):
        raise ValueError(f"open_out: mode {mode!r}: only 'w' or 'wb'")
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        raise IsADirectoryError(f"{target}: not a regular file; not replaced")
    folder = os.path.dirname(target)
    with _term_raises():
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target)[:200] + ".tmp-", dir=folder)
            with os.fdopen(fd, mode, **kwargs) as f:
                yield f
                f.flush()
                os.fchmod(f.fileno(), _mode_for(target))
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def write_json(path, obj, **kwargs):
    with open_out(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, **kwargs)
