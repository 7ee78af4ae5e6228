# which import makes a forked child unable to use CUDA ("Cannot re-initialize CUDA in forked subprocess")
import importlib, os, sys
mods = sys.argv[1:]
for m in mods:
    importlib.import_module(m)
    pid = os.fork()
    if pid == 0:
        try:
            import torch
            torch.zeros(1, device="cuda")
            os._exit(0)
        except Exception as exc:
            print("   ", type(exc).__name__, str(exc)[:100])
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    print(f"after import {m}: child CUDA {'ok' if os.waitstatus_to_exitcode(st) == 0 else 'FAILS'}", flush=True)
