# Lists a kernel of the python engine's kernels.py as CPython's bytecode (dis) and counts
# the bytecode instructions one call executes (sys.settrace with f_trace_opcodes), for
# package explain: one JSON object on stdout.
#
#   python3 bytecode.py <dir of kernels.py> <function> <warm-up ms> <args...>
#
# The warm-up calls the function for that long first, as the harness does (a call still
# running when the time is up is interrupted), so that CPython's specialising interpreter
# (3.11 on) has rewritten its instructions for the types it saw: those are listed.
import dis
import json
import signal
import sys

sys.path.insert(0, sys.argv[1])
import kernels  # noqa: E402

name = sys.argv[2]
warm_ms = int(sys.argv[3])
args = [int(a) for a in sys.argv[4:]]
fn = getattr(kernels, name)
code = fn.__code__
sys.setrecursionlimit(100000)


class Enough(Exception):
    pass


def times_up(signum, frame):
    raise Enough()


warm_calls = 0
if warm_ms > 0:
    signal.signal(signal.SIGALRM, times_up)
    signal.setitimer(signal.ITIMER_REAL, warm_ms / 1000)
    try:
        while True:
            fn(*args)
            warm_calls += 1
    except Enough:
        pass
    signal.setitimer(signal.ITIMER_REAL, 0)

try:
    instructions = list(dis.get_instructions(fn, adaptive=True))
    adaptive = True
except TypeError:  # before 3.11: no specialisation
    instructions = list(dis.get_instructions(fn))
    adaptive = False

lines = []
prev_global = None
for ins in instructions:
    target = -1
    # A specialised jump (JUMP_BACKWARD_QUICK) is in neither list: its name says it.
    jump = ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs or "JUMP" in ins.opname or ins.opname.startswith("FOR_ITER")
    if jump:
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
    if ins.opname.startswith("LOAD_GLOBAL"):
        prev_global = ins.argval
    elif call:
        prev_global = None

# A traced call is slow: the count stops after BUDGET instructions, partial.
BUDGET = 3_000_000
ops = 0
calls = 0
returns = 0


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
json.dump({"version": sys.version.split()[0], "adaptive": adaptive, "warm_calls": warm_calls, "size": len(code.co_code), "lines": lines,
           "ops": ops, "calls": calls, "returns": returns, "partial": partial}, sys.stdout)
