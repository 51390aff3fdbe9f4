"""tunebench's warm server: the script's imports and setup() run once here, and every trial is a
fork() of this process. Started by the harness with TUNEBENCH_WARM_SERVER=fork; tunebench.main()
calls serve(). Requests arrive as JSON lines on stdin, replies leave as JSON lines on fd 3:

  in:  {"op": "fork", "id": "t0003", "argv": [...], "env": {...}, "cwd": "...", "stderr": "<file>",
        "memory_bytes": 1342177280 | null, "cgroup_procs": ["<cgroup.procs file>", ...]},
       then {"op": "ack", "id": "t0003"} once the harness has seen the child in /proc
  out: {"op": "setup", "pid": 123} as setup() starts, then {"op": "ready", "pid": 123} or
       {"op": "refused", "reason": "..."} once, then per request
       {"op": "forked", "id": "t0003", "pid": 456} or {"op": "refused", "id": ..., "reason": ...},
       and {"op": "exit", "id": "t0003", "pid": 456, "code": 0 | null, "signal": 9 | null}.

The server never starts CUDA work itself, and refuses to fork once CUDA is initialised (a forked
child cannot use its parent's CUDA context). It dies with the harness: EOF on stdin or the parent's
death (PR_SET_PDEATHSIG) kills it and every trial it forked. It is its descendants' subreaper
(PR_SET_CHILD_SUBREAPER): a trial's process that double-forks stays in its tree, where the harness
finds and ends it. The harness checks every reply: a pid it names must be a child of this server.
A forked child is not reaped before the harness acknowledges it: a trial that ends within a
millisecond stays a zombie child of the server until the harness has verified it, then its exit
is reported.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import resource
import select
import signal
import sys
from typing import Any, Callable, Dict, Mapping, NoReturn, Set, Tuple

REPLY_FD = 3
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_TRIAL_VARS = ("TUNEBENCH_",)

Request = Dict[str, Any]  # one request from the harness, a JSON object
Children = Dict[int, Any]  # forked child's pid -> the request id it runs
Unseen = Set[int]  # forked children the harness has not acknowledged yet
OwnFds = Tuple[int, int]  # the server's wake-up pipe, closed in a child
RunTrial = Callable[[Any], object]  # run_trial(state): one trial, in the forked child


def _die_with_parent() -> bool:
    """SIGKILL this process when its parent dies (Linux); returns False where prctl is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process instead of init (Linux >= 3.4)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def cuda_initialised() -> bool:
    """Whether torch (if it was imported) has initialised CUDA in this process."""
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a stand-in torch without cuda: nothing to fork-protect
        return False


def _reply(message: Mapping[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(REPLY_FD, data):]


def serve(run_trial: RunTrial, setup: Callable[[], Any] | None = None) -> NoReturn:
    """The server loop: setup() once here, then run_trial(state) in a forked child per request.
    Never returns."""
    _die_with_parent()
    _become_subreaper()
    server_pid = os.getpid()
    parent = os.getppid()
    _reply({"op": "setup", "pid": server_pid})
    try:
        state = setup() if setup is not None else None
    except BaseException as error:  # noqa: BLE001 - reported, then the harness falls back
        _reply({"op": "refused", "reason": f"setup() failed: {type(error).__name__}: {error}"})
        os._exit(1)
    if cuda_initialised():
        _reply({"op": "refused", "reason": "CUDA is already initialised in the server (the script's imports or "
                "setup() touched the GPU); a forked trial cannot use it"})
        os._exit(0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    _reply({"op": "ready", "pid": server_pid})
    children: Children = {}  # pid -> request id
    unseen: Unseen = set()  # forked children the harness has not acknowledged yet: never reaped
    buffered = b""
    while True:
        try:
            ready, _, _ = select.select([0, wake_r], [], [], 1.0)
        except InterruptedError:
            ready = []
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(children, unseen)
        if os.getppid() != parent:
            _shutdown(children)
        if 0 not in ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            _shutdown(children)  # the harness is gone
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            if line.strip():
                _handle(json.loads(line), run_trial, state, server_pid, children, unseen, (wake_r, wake_w))
        _reap(children, unseen)  # an acknowledged child may have ended already: its SIGCHLD came earlier


def _handle(
    request: Request, run_trial: RunTrial, state: Any, server_pid: int, children: Children, unseen: Unseen, own_fds: OwnFds
) -> None:
    rid = request.get("id")
    if request.get("op") == "ack":
        unseen.difference_update([pid for pid, r in children.items() if r == rid])
        return
    if request.get("op") != "fork":
        _reply({"op": "refused", "id": rid, "reason": f"unknown op {request.get('op')!r}"})
        return
    if cuda_initialised():
        _reply({"op": "refused", "id": rid, "reason": "CUDA is initialised in the server"})
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(request, run_trial, state, server_pid, own_fds)
    children[pid] = rid
    unseen.add(pid)
    _reply({"op": "forked", "id": rid, "pid": pid})


def _reap(children: Children, unseen: Unseen) -> None:
    """Reaps ended children and reports the trials among them."""
    while children:
        pid, status = _wait_one(children, unseen)
        if pid == 0:
            return
        rid = children.pop(pid, None)
        if rid is None:
            continue  # an orphan of a trial, re-parented to this subreaper
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        _reply({"op": "exit", "id": rid, "pid": pid, "code": code, "signal": sig})


def _wait_one(children: Children, unseen: Unseen) -> tuple[int, int]:
    """One ended child as (pid, status), or (0, 0). While a fork is unacknowledged only acknowledged
    trials are waited for, by pid: the unacknowledged child stays a zombie that the harness can
    still find in /proc, and orphans wait for the next call."""
    if not unseen:
        try:
            return os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return (0, 0)
    for pid in [p for p in children if p not in unseen]:
        try:
            ended = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if ended[0]:
            return ended
    return (0, 0)


def _shutdown(children: Children) -> NoReturn:
    for pid in list(children):
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    os._exit(0)


def _child(request: Request, run_trial: RunTrial, state: Any, server_pid: int, own_fds: OwnFds) -> NoReturn:
    """In the forked child: a trial of its own (session, limits, environment, arguments), then exit."""
    code = 1
    try:
        os.setsid()
        _die_with_parent()
        if os.getppid() != server_pid:
            os._exit(1)  # the server died between fork() and prctl()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in own_fds:
            os.close(fd)
        procs = request.get("cgroup_procs") or []
        for path in [procs] if isinstance(procs, str) else procs:
            with open(path, "w", encoding="ascii") as f:
                f.write("0")
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(err, 2)
        os.close(REPLY_FD)
        os.close(null)
        os.close(err)
        cap = request.get("memory_bytes")
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if request.get("cwd"):
            os.chdir(request["cwd"])
        for name in [n for n in os.environ if n.startswith(_TRIAL_VARS)]:
            del os.environ[name]
        os.environ.update(request.get("env", {}))
        sys.argv = list(request.get("argv", sys.argv))
        random.seed()  # a fresh process seeds from the OS; a fork would repeat the server's stream
        try:
            run_trial(state)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except KeyboardInterrupt:
            code = 130
    except BaseException:  # noqa: BLE001 - the trial's own failures were classified above
        import traceback  # noqa: PLC0415

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
