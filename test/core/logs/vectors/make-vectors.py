#!/usr/bin/python3
"""Writes the test vectors of test/core/logs, from the real Python libraries and from
Buildbot 3.7's own log storage code, so that the TypeScript tests need no Python.

Needs Debian 12's packages (Debian's /usr/bin/python3, not another interpreter):
    apt-get install -y --no-install-recommends buildbot python3-lz4 python3-zstandard python3-brotli

Usage (from the repository root):
    /usr/bin/python3 test/core/logs/vectors/make-vectors.py
        rewrites codecs.json (inputs and their encodings by zlib, bz2, lz4, zstandard,
        brotli) and buildbot.json (what Buildbot 3.7's LogsConnectorComponent and log
        endpoints store and answer for scripted appends, compressLog and reads)
    /usr/bin/python3 test/core/logs/vectors/make-vectors.py verify FILE
        decodes with the Python libraries every encoding in FILE (written by
        `npx tsx test/core/logs/vectors/dump-ours.ts FILE`), to check that what our
        encoders write is what Buildbot's libraries read

Inputs are written as {"parts": [[text, count], ...]} (the UTF-8 of each text repeated
count times, concatenated; in a text holding {i} the repeats replace it by 0, 1, ...)
or {"b64": ...}; outputs over 2 kB as {"sha256", "length", "head", "tail"}.
Buildbot's code is run, not copied: the database is an in-memory SQLite with Buildbot's
own table definitions, and its Deferreds fire synchronously.
"""

import base64
import bz2
import hashlib
import json
import os
import re
import sys
import warnings
import zlib

import brotli
import lz4.block
import zstandard

HERE = os.path.dirname(os.path.abspath(__file__))


def b64(data):
    return base64.b64encode(data).decode("ascii")


def digest(value):
    """Values over 2 kB as their SHA-256, length and ends; smaller ones as they are."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    if value is None or len(data) <= 2048:
        return value if isinstance(value, str) or value is None else {"b64": b64(value)}
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "length": len(data),
        "head": data[:200].decode("utf-8", "replace"),
        "tail": data[-200:].decode("utf-8", "replace"),
    }


def parts_text(parts):
    """Each text repeated count times; in a text holding {i}, the repeats number 0, 1, ..."""
    return "".join(
        "".join(text.replace("{i}", str(i)) for i in range(count)) if "{i}" in text else text * count
        for text, count in parts
    )


def parts_bytes(parts):
    return parts_text(parts).encode("utf-8")


def lcg_bytes(n, seed=12345):
    out = bytearray()
    x = seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append((x >> 16) & 0xFF)
    return bytes(out)


# ---------------------------------------------------------------------------
# codecs.json


CODEC_INPUTS = [
    ("empty", {"parts": []}),
    ("one-byte", {"parts": [["a", 1]]}),
    ("stdio-lines", {"parts": [["ohello\neworld\nhheader \u2713", 1]]}),
    ("fixture-like-log", {"parts": [["otest_{i} ... ok (build)\n", 300]]}),
    ("unicode", {"parts": [["\u00e9t\u00e9 \u2713 \U0001F600 \u4e2d\u6587\n", 50]]}),
    ("all-bytes", {"b64": b64(bytes(range(256)) * 4)}),
    ("runs", {"parts": [["a", 1000], ["b", 3], ["c", 256], ["d", 4], ["e", 255], ["f", 259]]}),
    ("incompressible", {"b64": b64(lcg_bytes(2000))}),
    # More than one bz2 block (900 kB each), long lz4 matches.
    ("large-log", {"parts": [["line: compiling module and linking objects, done\n", 20000]]}),
]


def codec_encodings(data):
    out = [
        {"code": 1, "variant": "zlib.compress(data, 9)", "b64": b64(zlib.compress(data, 9))},
        {"code": 2, "variant": "bz2.compress(data, 9)", "b64": b64(bz2.compress(data, 9))},
        {"code": 3, "variant": "lz4.block.compress(data)", "b64": b64(lz4.block.compress(data))},
        {
            "code": 3,
            "variant": "lz4.block.compress(data, mode='high_compression')",
            "b64": b64(lz4.block.compress(data, mode="high_compression")),
        },
        {"code": 4, "variant": "ZstdCompressor().compress(data)", "b64": b64(zstandard.ZstdCompressor().compress(data))},
        {
            "code": 4,
            "variant": "ZstdCompressor(level=19, write_content_size=False, write_checksum=True)",
            "b64": b64(
                zstandard.ZstdCompressor(level=19, write_content_size=False, write_checksum=True).compress(data)
            ),
        },
        {"code": 5, "variant": "brotli.compress(data)", "b64": b64(brotli.compress(data))},
    ]
    for e in out:
        assert decode_py(e["code"], base64.b64decode(e["b64"])) == data
    return out


def decode_py(code, data):
    if code == 0:
        return data
    if code == 1:
        return zlib.decompress(data)
    if code == 2:
        return bz2.decompress(data)
    if code == 3:
        return lz4.block.decompress(data)
    if code == 4:
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if code == 5:
        return brotli.decompress(data)
    raise ValueError(code)


def input_bytes(spec):
    return parts_bytes(spec["parts"]) if "parts" in spec else base64.b64decode(spec["b64"])


def make_codecs():
    cases = []
    for name, spec in CODEC_INPUTS:
        cases.append({"name": name, "input": spec, "encodings": codec_encodings(input_bytes(spec))})
    # Decompression bombs: small stored bytes that decode far past the 64 MiB cap.
    bomb = bytes(80 * 1024 * 1024)
    bombs = [
        {"code": 2, "decoded_size": len(bomb), "b64": b64(bz2.compress(bomb, 9))},
        {"code": 4, "decoded_size": len(bomb), "b64": b64(zstandard.ZstdCompressor().compress(bomb))},
        {
            "code": 4,
            "decoded_size": len(bomb),
            "b64": b64(zstandard.ZstdCompressor(write_content_size=False).compress(bomb)),
        },
        {"code": 5, "decoded_size": len(bomb), "b64": b64(brotli.compress(bomb))},
    ]
    return {
        "generator": "make-vectors.py",
        "libraries": {
            "zlib": zlib.ZLIB_RUNTIME_VERSION,
            "lz4": lz4.library_version_string(),
            "python-lz4": lz4.__version__,
            "zstandard": zstandard.__version__,
            "brotli": brotli.__version__,
        },
        "cases": cases,
        "bombs": bombs,
    }


# ---------------------------------------------------------------------------
# buildbot.json


def buildbot_harness(method):
    warnings.filterwarnings("ignore")
    from types import SimpleNamespace

    import sqlalchemy as sa
    from buildbot.data import logchunks
    from buildbot.data.resultspec import ResultSpec
    from buildbot.db import logs as dblogs
    from buildbot.db import model
    from twisted.internet import defer

    engine = sa.create_engine("sqlite://")
    tables = model.Model
    tables.metadata.create_all(engine, tables=[tables.logs, tables.logchunks])
    conn = engine.connect()

    class Pool:
        def do(self, fn, *args, **kwargs):
            return defer.succeed(fn(conn, *args, **kwargs))

    master = SimpleNamespace(config=SimpleNamespace(logCompressionMethod=method))
    connector = SimpleNamespace(pool=Pool(), model=tables, master=master)
    master.db = SimpleNamespace(logs=dblogs.LogsConnectorComponent(connector))

    def wait(d):
        out = []
        d.addBoth(out.append)
        if isinstance(out[0], Exception) or hasattr(out[0], "raiseException"):
            out[0].raiseException()
        return out[0]

    def rows(logid):
        c = tables.logchunks.c
        q = sa.select([c.first_line, c.last_line, c.content, c.compressed]).where(c.logid == logid)
        return [
            {"first_line": r.first_line, "last_line": r.last_line, "compressed": r.compressed, "b64": b64(r.content)}
            for r in conn.execute(q.order_by(c.first_line))
        ]

    def num_lines(logid):
        c = tables.logs.c
        return conn.execute(sa.select([c.num_lines]).where(c.id == logid)).fetchone()[0]

    def contents(logid, offset, limit):
        ep = logchunks.LogChunkEndpoint(None, master)
        got = wait(ep.get(ResultSpec(offset=offset, limit=limit), {"logid": logid}))
        return None if got is None else got["content"]

    def raw(logid):
        ep = logchunks.RawLogChunkEndpoint(None, master)
        return wait(ep.get(ResultSpec(), {"logid": logid}))["raw"]

    return SimpleNamespace(
        logs=master.db.logs, wait=wait, rows=rows, num_lines=num_lines, contents=contents, raw=raw
    )


# Each scenario: a log type, Buildbot's logCompressionMethod, the appended texts (as
# parts), whether and how compressLog runs, and which line ranges to read back.
SCENARIOS = [
    {
        "name": "one append of 5000 short lines stays one chunk",
        "type": "s",
        "method": "gz",
        "appends": [[["o{i}\n", 5000]]],
    },
    {
        "name": "content of 65535 bytes is one chunk",
        "type": "t",
        "method": "gz",
        "appends": [[["x" * 99 + "\n", 655], ["y" * 35, 1], ["\n", 1]]],
    },
    {
        "name": "content of 65536 bytes splits at the last newline",
        "type": "t",
        "method": "gz",
        "appends": [[["x" * 99 + "\n", 655], ["y" * 36, 1], ["\n", 1]]],
    },
    {
        "name": "lines over several chunks",
        "type": "s",
        "method": "gz",
        "appends": [[["oline {i} of a long build output, compiling and linking\n", 3000]]],
        "reads": [[0, 9], [1100, 1200], [1000, 2999], [2990, 3010]],
    },
    {
        "name": "long ascii line is truncated and the next line kept",
        "type": "t",
        "method": "gz",
        "appends": [[["head\n", 1], ["a", 70000], ["\n", 1], ["after\n", 1]]],
    },
    {
        "name": "long line of 2-byte characters straddling the limit",
        "type": "t",
        "method": "gz",
        "appends": [[["a", 1], ["\u00e9", 40000], ["\n", 1], ["tail \u00e9\n", 1]]],
    },
    {
        "name": "long line of 3-byte characters straddling the limit",
        "type": "t",
        "method": "bz2",
        "appends": [[["\u2713", 30000], ["\n", 1]]],
    },
    {
        "name": "long line of 4-byte characters straddling the limit, last line",
        "type": "t",
        "method": "lz4",
        "appends": [[["ab", 1], ["\U0001F600", 20000], ["\n", 1]]],
    },
    {
        "name": "a line of exactly 65536 bytes is kept whole",
        "type": "t",
        "method": "gz",
        "appends": [[["z", 65536], ["\n", 1]]],
    },
    {
        "name": "unicode stdio lines",
        "type": "s",
        "method": "bz2",
        "appends": [[["o\u00e9t\u00e9 \u2713\n", 10], ["e\U0001F600 stderr\n", 5], ["h\u4e2d\u6587 header\n", 3]]],
        "reads": [[2, 12], [15, 17]],
    },
    {
        "name": "stdio raw with characters Python's splitlines breaks at",
        "type": "s",
        "method": "raw",
        "appends": [[["oa\rb\n", 1], ["oc\x0cd\n", 1], ["oe\u2028f\n", 1], ["og\x1ch\n", 1], ["oplain\n", 1]]],
    },
    {
        "name": "html log",
        "type": "h",
        "method": "gz",
        "appends": [[["<html><body><h1>Report</h1><p>caf\u00e9</p></body></html>\n", 1]]],
    },
    {
        "name": "an appended empty line writes no chunk (Buildbot quirk)",
        "type": "t",
        "method": "raw",
        "appends": [[["first\n", 1]], [["\n", 1]], [["third\n", 1]]],
    },
    {
        "name": "a split whose newline is the last byte drops the empty last line (Buildbot quirk)",
        "type": "t",
        "method": "gz",
        "appends": [[["q", 65535], ["\n", 1], ["\n", 1]], [["next\n", 1]]],
    },
    {
        "name": "compressLog merges 1200 one-line chunks into groups of 1001 lines",
        "type": "s",
        "method": "gz",
        "appends": [[["ostep output line %d\n" % i, 1]] for i in range(1200)],
        "compress": {"force": False},
        "reads": [[995, 1005], [0, 1199], [1100, 1102]],
    },
    {
        "name": "compressLog groups by stored bytes",
        "type": "t",
        "method": "raw",
        "appends": [[["%s\n" % (chr(0x61 + i % 26) * 9000), 1]] for i in range(8)],
        "compress": {"force": False},
    },
    {
        "name": "compressLog with force recompresses a lone chunk",
        "type": "t",
        "method": "gz",
        "appends": [[["only chunk line {i}\n", 40]]],
        "compress": {"force": True},
    },
    {
        "name": "compressLog of lz4 chunks",
        "type": "s",
        "method": "lz4",
        "appends": [[["otest_{i} ... ok (lz4)\n", 200]] for _ in range(3)],
        "compress": {"force": False},
    },
    {
        "name": "compressLog of bz2 chunks",
        "type": "s",
        "method": "bz2",
        "appends": [[["etest_{i} ... warning (bz2)\n", 100]] for _ in range(4)],
        "compress": {"force": False},
    },
]


def run_scenario(index, sc):
    bb = buildbot_harness(sc["method"])
    logid = bb.wait(bb.logs.addLog(1, "log%d" % index, "log%d" % index, sc["type"]))
    appends = []
    for parts in sc["appends"]:
        bb.wait(bb.logs.appendLog(logid, parts_text(parts)))
        appends.append({"parts": parts})
    out = {
        "name": sc["name"],
        "type": sc["type"],
        "method": sc["method"],
        "appends": appends,
        "rows": bb.rows(logid),
        "num_lines": bb.num_lines(logid),
    }
    if "compress" in sc:
        bb.wait(bb.logs.compressLog(logid, force=sc["compress"]["force"]))
        out["compress"] = sc["compress"]
        out["compressed_rows"] = [
            {
                "first_line": r["first_line"],
                "last_line": r["last_line"],
                "compressed": r["compressed"],
                "decoded": digest(decode_py(r["compressed"], base64.b64decode(r["b64"]))),
            }
            for r in bb.rows(logid)
        ]
    n = out["num_lines"]
    ranges = sc.get("reads", []) + [[0, max(0, n - 1)]]
    out["reads"] = [
        {"first": a, "last": b, "text": digest(bb.wait(bb.logs.getLogLines(logid, a, b)))} for a, b in ranges
    ]
    queries = [(None, None), (0, 1), (1, 2), (n - 1, None), (n, None), (n, 3), (0, 0)]
    out["contents"] = [{"offset": o, "limit": l, "content": digest(bb.contents(logid, o, l))} for o, l in queries]
    out["raw"] = digest(bb.raw(logid))
    return out


def make_buildbot():
    import buildbot

    return {
        "generator": "make-vectors.py",
        "buildbot": buildbot.version,
        "scenarios": [run_scenario(i, sc) for i, sc in enumerate(SCENARIOS)],
    }


def write(name, obj):
    """Indented JSON with each innermost object or list on one line."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    for open_, close in (("{", "}"), ("[", "]")):
        leaf = re.compile(r"\%s\n\s+([^{}\[\]]*?)\n\s*\%s" % (open_, close))
        text = leaf.sub(lambda m: open_ + " ".join(x.strip() for x in m.group(1).split("\n")) + close, text)
    path = os.path.join(HERE, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print("wrote", path, os.path.getsize(path), "bytes")


def verify(path):
    with open(path, encoding="utf-8") as f:
        ours = json.load(f)
    count = 0
    for case in ours["cases"]:
        data = base64.b64decode(case["input"])
        for code, enc in case["encodings"].items():
            got = decode_py(int(code), base64.b64decode(enc))
            if got != data:
                raise SystemExit("MISMATCH %s code %s" % (case["name"], code))
            count += 1
    print("verified", count, "encodings with the Python libraries")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "verify":
        verify(sys.argv[2])
    elif len(sys.argv) == 1:
        write("codecs.json", make_codecs())
        write("buildbot.json", make_buildbot())
    else:
        raise SystemExit(__doc__)
