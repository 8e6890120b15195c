# gpuprep payload frame: how the probe, validate and memory hand their one result to gpuprep.
# The build inlines this file into each payload (scripts/copy-assets.mjs, "@inline"); the reader
# is src/transports/payload-frame.ts. Any CPython >= 3.8, standard library only, and its top
# level only defines names.
#
# The result is ONE line on fd 1:  "@gpuprep-frame NONCE PAYLOAD JSON"  (PAYLOAD: probe, validate,
# memory). gpuprep takes the first line with this run's nonce and payload name whose JSON is an
# object; anything a sitecustomize, a .pth hook, an extension or the user's code prints before or
# after is not the result, and an atexit hook's frame comes after ours.
#
# The nonce never travels in argv or the environment (a hook reads sys.argv and os.environ
# freely, and /proc/PID/cmdline is world-readable). GPUPREP_FRAME_CHANNEL, a line gpuprep puts at
# the top of the script, says where it is:
#   "fd:N"       this machine: gpuprep wrote it into pipe N and closed its end; read once, closed
#                at once, and never inherited by children (subprocess closes fds above 2).
#   "nonce:HEX"  another machine (docker exec, ssh, srun, a pod): the script itself, which arrives
#                on stdin, is the private channel there; the global is deleted once read.
# Code inside the interpreter that knows this protocol can still read the channel first (it
# could as well replace the payload); what this closes is the generic hook: argv and environment
# scraping, and output printed before or after the payload's own frame.
import json
import os
import re

FRAME_TAG = "@gpuprep-frame"
NONCE_PATTERN = re.compile(r"^[0-9a-f]{16,64}$")


def take_nonce(main_globals):
    """This run's nonce from the channel gpuprep named, or None; the channel is gone afterwards."""
    channel = main_globals.pop("GPUPREP_FRAME_CHANNEL", None)
    if not isinstance(channel, str):
        return None
    kind, _, value = channel.partition(":")
    if kind == "fd" and value.isdigit():
        value = read_secret_fd(int(value))
    elif kind != "nonce":
        return None
    return value if NONCE_PATTERN.match(value) else None


def read_secret_fd(fd):
    data = b""
    try:
        while len(data) <= 128:
            chunk = os.read(fd, 128)
            if not chunk:
                break
            data += chunk
    except OSError:
        return ""
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    return data.decode("ascii", "replace").strip()


def emit(nonce, payload, document):
    """The result, written to fd 1 itself (a sitecustomize may have replaced sys.stdout). The
    leading newline ends any half line a stray print left without one."""
    line = "\n%s %s %s %s\n" % (FRAME_TAG, nonce or "-", payload, json.dumps(document, default=str))
    data = line.encode("utf-8")
    while data:
        data = data[os.write(1, data):]
