# SPDX-License-Identifier: LGPL-2.1-or-later
"""The JSON schema of linkprobe-probe-gpu's document, as linkprobe-probe-gpu(8) documents it, and a strict
checker for it: every documented member must be there with its type, and nothing undocumented may be.
"""

STR = "string"
INT = "integer"
NUM = "number"
BOOL = "boolean"
NULL_STR = "string or null"


class SchemaError(AssertionError):
    pass


def _type_ok(value, kind):
    if kind == STR:
        return isinstance(value, str)
    if kind == NULL_STR:
        return value is None or isinstance(value, str)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise ValueError(kind)


def _check_members(obj, where, required, optional=None):
    """required/optional map member names to a type name or a callable(value, where)."""
    optional = optional or {}
    if not isinstance(obj, dict):
        raise SchemaError(f"{where}: expected an object, got {type(obj).__name__}")
    for name in obj:
        if name not in required and name not in optional:
            raise SchemaError(f"{where}: undocumented member {name!r}")
    for name, spec in list(required.items()) + list(optional.items()):
        if name not in obj:
            if name in required:
                raise SchemaError(f"{where}: missing member {name!r}")
            continue
        value = obj[name]
        path = f"{where}.{name}"
        if callable(spec):
            spec(value, path)
        elif not _type_ok(value, spec):
            raise SchemaError(f"{path}: expected {spec}, got {value!r}")


def _array_of(check):
    def f(value, where):
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected an array, got {value!r}")
        for i, item in enumerate(value):
            check(item, f"{where}[{i}]")
    return f


def _one_of(*choices):
    def f(value, where):
        if value not in choices:
            raise SchemaError(f"{where}: {value!r} is not one of {choices}")
    return f


def _positive_number(value, where):
    if not _type_ok(value, NUM) or value <= 0:
        raise SchemaError(f"{where}: expected a positive number, got {value!r}")


def _non_negative_int(value, where):
    if not _type_ok(value, INT) or value < 0:
        raise SchemaError(f"{where}: expected a non-negative integer, got {value!r}")


def _error(value, where):
    _check_members(value, where, {"name": STR, "message": STR})
    if not value["name"]:
        raise SchemaError(f"{where}.name is empty")


FP_CONFIG_BITS = ("denorm", "inf_nan", "round_to_nearest", "round_to_zero", "round_to_inf", "fma", "soft_float",
                  "correctly_rounded_divide_sqrt")
SCALAR_TYPES = ("char", "short", "int", "long", "float", "double", "half")


def _widths(value, where):
    _check_members(value, where, {t: _non_negative_int for t in SCALAR_TYPES})


def _vector_widths(value, where):
    _check_members(value, where, {"native": _widths, "preferred": _widths})


def _platform(value, where):
    _check_members(value, where,
                   {"index": _non_negative_int, "name": NULL_STR, "vendor": NULL_STR, "version": NULL_STR,
                    "profile": NULL_STR, "device_count": _non_negative_int},
                   {"error": _error})


def _test_common(value, where, unit):
    required = {
        "status": _one_of("ok"),
        "unit": _one_of(unit),
        "best": _positive_number,
        "median": _positive_number,
        "min": _positive_number,
        "max": _positive_number,
        "relative_spread": NUM,
        "runs": _non_negative_int,
        "samples": _array_of(_positive_number),
        "warmup_launches": _non_negative_int,
        "warmup_ms": NUM,
        "launch_ms": _positive_number,
        "global_work_size": _non_negative_int,
        "local_work_size": _non_negative_int,
    }
    return required


LOAD_TYPES = ("uint", "uint2", "uint4", "uint8", "uint16")
ACCESS_PATTERNS = ("block", "grid")
HOST_MEMORY = ("pinned", "pageable")


def _candidate(keys, measured):
    """A sweep's candidate: the keys that name it, then either what it measured or why it failed."""
    def f(value, where):
        if isinstance(value, dict) and "error" in value:
            _check_members(value, where, dict(keys, error=_error))
        else:
            _check_members(value, where, dict(keys, **measured))
    return f


def _check_chosen(value, where, names):
    """The test timed the fastest candidate that worked, and every way was tried exactly once."""
    candidates = value["candidates"]
    tried = [tuple(c[n] for n in names) for c in candidates]
    if len(set(tried)) != len(tried):
        raise SchemaError(f"{where}.candidates: a way was tried twice: {tried}")
    working = [c for c in candidates if "error" not in c]
    chosen = [c for c in working if all(c[n] == value[n] for n in names)]
    if len(chosen) != 1:
        raise SchemaError(f"{where}: the timed way {[value[n] for n in names]} is not a working candidate")
    if any(c["gb_s"] > chosen[0]["gb_s"] for c in working):
        raise SchemaError(f"{where}: a faster candidate than the timed one: {candidates}")


def _bandwidth_test(value, where):
    required = _test_common(value, where, "GB/s")
    required.update({
        "buffer_bytes": _non_negative_int,
        "bytes_read_per_run": _non_negative_int,
        "load_type": _one_of(*LOAD_TYPES),
        "access_pattern": _one_of(*ACCESS_PATTERNS),
        "loads_per_work_item": _non_negative_int,
        "fill_ms": NUM,
        "cache_bytes": _non_negative_int,
        "cache_source": _one_of("device", "host-last-level-cache"),
        "candidates": _array_of(_candidate({"load_type": _one_of(*LOAD_TYPES),
                                            "access_pattern": _one_of(*ACCESS_PATTERNS)},
                                           {"local_work_size": _non_negative_int, "gb_s": _positive_number})),
    })
    _check_members(value, where, required)
    _check_stats(value, where)
    _check_chosen(value, where, ("load_type", "access_pattern"))


def _transfer_test(value, where):
    if isinstance(value, dict) and value.get("status") == "error":
        _check_members(value, where, {"status": STR, "error": _error})
        return
    required = _test_common(value, where, "GB/s")
    del required["global_work_size"], required["local_work_size"]
    required.update({
        "bytes_per_copy": _non_negative_int,
        "host_memory": _one_of(*HOST_MEMORY),
        "timed_by": _one_of("device", "host"),
        "candidates": _array_of(_candidate({"host_memory": _one_of(*HOST_MEMORY)}, {"gb_s": _positive_number})),
    })
    _check_members(value, where, required)
    _check_stats(value, where)
    _check_chosen(value, where, ("host_memory",))


def _nvml(value, where):
    status = value.get("status") if isinstance(value, dict) else None
    if status == "absent":
        _check_members(value, where, {"status": STR, "reason": STR})
    elif status == "error":
        _check_members(value, where, {"status": STR, "error": _error})
    else:
        link = lambda v, w: _check_members(v, w, {"link": _non_negative_int, "version": _non_negative_int,  # noqa: E731
                                                  "remote_pci_bus_id": _pci,
                                                  "remote_type": _one_of("gpu", "npu", "switch", "unknown")})
        device = lambda v, w: _check_members(v, w, {"pci_bus_id": _pci, "nvlinks": _array_of(link)})  # noqa: E731
        _check_members(value, where, {"status": _one_of("ok"), "devices": _array_of(device)})


def _fma_test(value, where):
    if isinstance(value, dict) and value.get("status") == "unsupported":
        _check_members(value, where, {"status": STR, "reason": STR})
        return
    required = _test_common(value, where, "GFLOPS")
    required.update({
        "instruction": _one_of("fma", "mad"),
        "vector_width": _one_of(1, 2, 4, 8, 16),
        "chains_per_work_item": _non_negative_int,
        "iterations": _non_negative_int,
        "flops_per_run": _non_negative_int,
    })
    _check_members(value, where, required)
    _check_stats(value, where)


def _check_stats(t, where):
    samples = t["samples"]
    if t["runs"] != len(samples) or not samples:
        raise SchemaError(f"{where}: runs={t['runs']} but {len(samples)} samples")
    if t["best"] != t["max"] or abs(t["max"] - max(samples)) > 1e-6 or abs(t["min"] - min(samples)) > 1e-6:
        raise SchemaError(f"{where}: best/max/min do not match the samples")
    if not t["min"] <= t["median"] <= t["max"]:
        raise SchemaError(f"{where}: median outside [min, max]")
    expected = (t["max"] - t["min"]) / t["median"]
    if abs(t["relative_spread"] - expected) > 1e-3 * max(1.0, expected):
        raise SchemaError(f"{where}: relative_spread {t['relative_spread']} is not (max-min)/median = {expected}")


def _fp16_figure(value, where):
    if value == "unsupported":
        return
    _positive_number(value, where)


def _measurement(value, where):
    if isinstance(value, dict) and value.get("status") == "error":
        _check_members(value, where, {"status": STR, "error": _error})
        return
    _check_members(value, where, {
        "status": _one_of("ok"),
        "memory_bandwidth_gb_s": _positive_number,
        "fp32_gflops": _positive_number,
        "fp16_gflops": _fp16_figure,
        "memory_bandwidth_median_gb_s": _positive_number,
        "fp32_median_gflops": _positive_number,
        "fp16_median_gflops": _fp16_figure,
        "timing": _one_of("device", "host"),
        "duration_ms": NUM,
        "warnings": _array_of(lambda v, w: _check_type(v, w, STR)),
        "memory_bandwidth": _bandwidth_test,
        "fp32": _fma_test,
        "fp16": _fma_test,
    }, {
        "host_to_device_gb_s": _positive_number,
        "device_to_host_gb_s": _positive_number,
        "host_to_device_median_gb_s": _positive_number,
        "device_to_host_median_gb_s": _positive_number,
        "host_to_device": _transfer_test,
        "device_to_host": _transfer_test,
    })
    if ("host_to_device_gb_s" in value) != ("device_to_host_gb_s" in value):
        raise SchemaError(f"{where}: host_to_device_gb_s and device_to_host_gb_s come together")
    if "host_to_device_gb_s" in value and value["host_to_device_gb_s"] != value["host_to_device"]["best"]:
        raise SchemaError(f"{where}: host_to_device_gb_s is not host_to_device.best")
    for direction in ("host_to_device", "device_to_host"):
        if (f"{direction}_gb_s" in value) != (f"{direction}_median_gb_s" in value):
            raise SchemaError(f"{where}: {direction}_gb_s and its median come together")
        if f"{direction}_median_gb_s" in value and value[f"{direction}_median_gb_s"] != value[direction]["median"]:
            raise SchemaError(f"{where}: {direction}_median_gb_s is not {direction}.median")
    if value["memory_bandwidth_gb_s"] != value["memory_bandwidth"]["best"]:
        raise SchemaError(f"{where}: memory_bandwidth_gb_s is not memory_bandwidth.best")
    if value["fp32_gflops"] != value["fp32"]["best"]:
        raise SchemaError(f"{where}: fp32_gflops is not fp32.best")
    for figure, test in (("memory_bandwidth_median_gb_s", "memory_bandwidth"), ("fp32_median_gflops", "fp32"),
                         ("fp16_median_gflops", "fp16")):
        if value[test].get("status") == "unsupported":
            if value[figure] != "unsupported":
                raise SchemaError(f"{where}: {test} unsupported but {figure} = {value[figure]!r}")
        elif value[figure] != value[test]["median"]:
            raise SchemaError(f"{where}: {figure} is not {test}.median")
    if value["fp16"]["status"] == "unsupported":
        if value["fp16_gflops"] != "unsupported":
            raise SchemaError(f"{where}: fp16 unsupported but fp16_gflops = {value['fp16_gflops']!r}")
    elif value["fp16_gflops"] != value["fp16"]["best"]:
        raise SchemaError(f"{where}: fp16_gflops is not fp16.best")


def _check_type(value, where, kind):
    if not _type_ok(value, kind):
        raise SchemaError(f"{where}: expected {kind}, got {value!r}")


def _uuid(value, where):
    import re
    if value is not None and not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value):
        raise SchemaError(f"{where}: {value!r} is not a UUID")


def _pci(value, where):
    import re
    if value is not None and not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", value):
        raise SchemaError(f"{where}: {value!r} is not a PCI address")


def _device(value, where):
    _check_members(value, where, {
        "index": _non_negative_int,
        "key": STR,
        "platform_index": _non_negative_int,
        "device_index": _non_negative_int,
        "name": NULL_STR,
        "vendor": NULL_STR,
        "vendor_id": _non_negative_int,
        "platform": NULL_STR,
        "platform_vendor": NULL_STR,
        "platform_version": NULL_STR,
        "type": _one_of("cpu", "gpu", "accelerator", "custom", "default"),
        "available": BOOL,
        "host_unified_memory": BOOL,
        "compute_units": _non_negative_int,
        "max_clock_mhz": _non_negative_int,
        "global_memory_bytes": _non_negative_int,
        "max_allocation_bytes": _non_negative_int,
        "local_memory_bytes": _non_negative_int,
        "global_memory_cache_bytes": _non_negative_int,
        "max_work_group_size": _non_negative_int,
        "driver_version": NULL_STR,
        "opencl_version": NULL_STR,
        "opencl_c_version": NULL_STR,
        "fp16_supported": BOOL,
        "half_fp_config": _array_of(_one_of(*FP_CONFIG_BITS)),
        "single_fp_config": _array_of(_one_of(*FP_CONFIG_BITS)),
        "vector_widths": _vector_widths,
        "uuid": _uuid,
        "pci_bus_id": _pci,
        "extensions": NULL_STR,
    }, {"measurement": _measurement})
    if "measurement" in value and value["measurement"].get("status") == "ok":
        unsupported = value["measurement"]["fp16_gflops"] == "unsupported"
        if unsupported == value["fp16_supported"]:
            raise SchemaError(f"{where}: fp16_supported={value['fp16_supported']} but fp16_gflops="
                              f"{value['measurement']['fp16_gflops']!r}")


def _iso8601(value, where):
    import re
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", value):
        raise SchemaError(f"{where}: {value!r} is not an ISO 8601 UTC timestamp")


def _host_cache(value, where):
    if value is None:
        return
    _check_members(value, where, {"level": _non_negative_int, "bytes": _non_negative_int,
                                  "total_bytes": _non_negative_int, "instances": _non_negative_int})
    if not value["bytes"] <= value["total_bytes"] or value["instances"] < 1 or value["level"] < 1:
        raise SchemaError(f"{where}: inconsistent {value}")


def validate(doc):
    """Raises SchemaError unless doc is a valid linkprobe-probe-gpu document (ok or error)."""
    if not isinstance(doc, dict):
        raise SchemaError("document: not an object")
    envelope = {"probe": _one_of("gpu"), "version": _one_of(1), "status": _one_of("ok", "error")}
    if doc.get("status") == "error":
        _check_members(doc, "document", dict(envelope, error=_error))
        return
    _check_members(doc, "document", dict(envelope, measured=BOOL, platforms=_array_of(_platform),
                                         devices=_array_of(_device), duration_ms=NUM),
                   {"measured_at": _iso8601, "quick": BOOL, "host_last_level_cache": _host_cache, "nvml": _nvml})
    if doc["measured"] != ("measured_at" in doc) or doc["measured"] != ("quick" in doc):
        raise SchemaError("document: measured_at/quick must be present exactly when measured is true")
    for i, d in enumerate(doc["devices"]):
        if d["index"] != i:
            raise SchemaError(f"document.devices[{i}].index is {d['index']}")
        if "measurement" in d and not doc["measured"]:
            raise SchemaError(f"document.devices[{i}]: a measurement without --measure")
    keys = [d["key"] for d in doc["devices"]]
    if len(set(keys)) != len(keys):
        raise SchemaError(f"document: device keys are not unique: {keys}")
    counted = sum(p["device_count"] for p in doc["platforms"])
    if counted != len(doc["devices"]):
        raise SchemaError(f"document: platforms count {counted} devices, devices has {len(doc['devices'])}")


def member_names(doc):
    """Every member name that occurs anywhere in doc (for checking the man page documents them all)."""
    names = set()
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            names.update(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return names
