# NVML read directly through pynvml (nvidia-ml-py), for the GPU health fixtures: what NVML itself
# returns for each GPU's ECC counters, retired pages, remapped rows, clock event (throttle) reasons,
# NVLink state and error counters and GPU fabric state. Each call's NVMLError is kept as its text.
import json
import pynvml as n


def plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "_fields_"):
        return {name: plain(getattr(value, name)) for name, _ in value._fields_}
    if hasattr(value, "__len__") and not isinstance(value, str) and hasattr(value, "__getitem__"):
        try:
            return [plain(v) for v in value]
        except Exception:
            pass
    return value


def call(name, *args):
    fn = getattr(n, name, None)
    if fn is None:
        return {"missing": name}
    try:
        return plain(fn(*args))
    except n.NVMLError as error:
        return {"nvmlError": str(error)}
    except Exception as error:  # a pynvml binding problem, not NVML's answer
        return {"error": repr(error)}


n.nvmlInit()
out = {"driver": call("nvmlSystemGetDriverVersion"), "nvml": call("nvmlSystemGetNVMLVersion"), "gpus": []}
for index in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(index)
    gpu = {"index": index, "uuid": call("nvmlDeviceGetUUID", h), "name": call("nvmlDeviceGetName", h)}
    gpu["eccMode"] = call("nvmlDeviceGetEccMode", h)
    gpu["ecc"] = {
        "%s.%s" % (kind, counter): call("nvmlDeviceGetTotalEccErrors", h, k, c)
        for kind, k in (("corrected", 0), ("uncorrected", 1))
        for counter, c in (("volatile", 0), ("aggregate", 1))
    }
    gpu["retiredPages"] = {
        "multipleSingleBit": call("nvmlDeviceGetRetiredPages", h, 0),
        "doubleBit": call("nvmlDeviceGetRetiredPages", h, 1),
        "pending": call("nvmlDeviceGetRetiredPagesPendingStatus", h),
    }
    gpu["remappedRows"] = call("nvmlDeviceGetRemappedRows", h)
    gpu["rowRemapperHistogram"] = call("nvmlDeviceGetRowRemapperHistogram", h)
    gpu["clocksEventReasons"] = call("nvmlDeviceGetCurrentClocksEventReasons", h)
    gpu["clocksThrottleReasons"] = call("nvmlDeviceGetCurrentClocksThrottleReasons", h)
    gpu["supportedClocksEventReasons"] = call("nvmlDeviceGetSupportedClocksEventReasons", h)
    gpu["fabric"] = call("nvmlDeviceGetGpuFabricInfo", h)
    links = []
    for link in range(18):
        state = call("nvmlDeviceGetNvLinkState", h, link)
        if isinstance(state, dict) and link > 0:
            break
        links.append({
            "link": link,
            "state": state,
            "errors": {name: call("nvmlDeviceGetNvLinkErrorCounter", h, link, c)
                       for name, c in (("replay", 0), ("recovery", 1), ("crcFlit", 2), ("crcData", 3))},
        })
    gpu["nvlink"] = links
    gpu["performanceState"] = call("nvmlDeviceGetPerformanceState", h)
    out["gpus"].append(gpu)
n.nvmlShutdown()
print(json.dumps(out, indent=1))
