# Lists a kernel of the python engine's kernels.py as CPython's bytecode (dis) and counts
# the bytecode instructions one call executes (sys.settrace with f_trace_opcodes), for
# package explain: one JSON object on stdout.
#
#   python3 bytecode.py <dir of kernels.py> <function> <args...>
import dis
import json
import sys

sys.path.insert(0, sys.argv[1])
import kernels  # noqa: E402

name = sys.argv[2]
args = [int(a) for a in sys.argv[3:]]
fn = getattr(kernels, name)
code = fn.__code__
sys.setrecursionlimit(100000)

lines = []
prev_global = None
for ins in dis.get_instructions(fn):
    target = -1
    if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
        target = ins.argval if isinstance(ins.argval, int) else -1
    call = ins.opname.startswith("CALL")
    lines.append({
        "offset": ins.offset,
        "text": (ins.opname + " " + ins.argrepr).strip(),
        "call": call,
        "recursive": call and prev_global == name,
        "back_edge": target >= 0 and target <= ins.offset,
        "target": target,
    })
    if ins.opname == "LOAD_GLOBAL":
        prev_global = ins.argval
    elif call:
        prev_global = None

# A traced call is slow: the count stops after BUDGET instructions, partial.
BUDGET = 3_000_000
ops = 0
calls = 0
returns = 0


class Enough(Exception):
    pass


def tracer(frame, event, arg):
    global ops, calls, returns
    if frame.f_code is not code:
        return None
    if event == "call":
        calls += 1
        frame.f_trace_opcodes = True
    elif event == "opcode":
        ops += 1
        if ops >= BUDGET:
            raise Enough()
    elif event == "return":
        returns += 1
    return tracer


partial = False
sys.settrace(tracer)
try:
    fn(*args)
except Enough:
    partial = True
sys.settrace(None)
json.dump({"version": sys.version.split()[0], "size": len(code.co_code), "lines": lines,
           "ops": ops, "calls": calls, "returns": returns, "partial": partial}, sys.stdout)
