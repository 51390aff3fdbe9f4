"""The GPU proof kit's fixtures from PyTorch: versions, torch.cuda.mem_get_info, and a real OOM (its
message and the exit status of a process that does not catch it). Writes JSON and text files into
the folder given; on a machine without CUDA (the rehearsal) it records the CPU allocator's OOM under
an address-space cap instead, and says so.
"""

import json
import os
import subprocess
import sys


def versions(torch):
    out = {"python": sys.version.split()[0], "torch": torch.__version__,
           "cuda": getattr(torch.version, "cuda", None), "cuda_available": torch.cuda.is_available()}
    for name in ("lightning", "pytorch_lightning", "accelerate"):
        try:
            out[name] = __import__(name).__version__
        except Exception as error:  # noqa: BLE001 - recorded, not fatal
            out[name] = f"not importable: {type(error).__name__}"
    if torch.cuda.is_available():
        out["device_name"] = torch.cuda.get_device_name(0)
        out["capability"] = list(torch.cuda.get_device_capability(0))
    return out


OOM_CHILD = """
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
blocks = []
while True:
    blocks.append(torch.empty(2**30, dtype=torch.uint8, device=device))  # 1 GiB at a time, uncaught
"""


def main(folder):
    import torch  # noqa: PLC0415

    os.makedirs(folder, exist_ok=True)
    facts = versions(torch)
    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info()
        facts["mem_get_info"] = {"free_bytes": free, "total_bytes": total}
    with open(os.path.join(folder, "torch.json"), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=2)
    # An OOM in a child of its own: on a GPU the card's real message; here the CPU allocator's under a cap.
    command = [sys.executable, "-c", OOM_CHILD]
    if not torch.cuda.is_available():
        command = ["prlimit", f"--as={3 * 2**30}", "--"] + command
    child = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    with open(os.path.join(folder, "oom-stderr.txt"), "w", encoding="utf-8") as f:
        f.write(child.stderr[-20000:])
    with open(os.path.join(folder, "oom.json"), "w", encoding="utf-8") as f:
        json.dump({"exit_status": child.returncode, "device": "cuda" if torch.cuda.is_available() else "cpu",
                   "last_line": (child.stderr.strip().splitlines() or [""])[-1][:2000]}, f, indent=2)
    print(json.dumps({"cuda": torch.cuda.is_available(), "oom_exit_status": child.returncode}))


if __name__ == "__main__":
    main(sys.argv[1])
