"""``make reproducible`` (tools/reproducible.py): its comparison, shown to catch what it must.

The second full build runs in ``make reproducible`` (and in CI), not here: it takes minutes.
"""

from __future__ import annotations

import reproducible as rp


def tree(root, files: dict[str, bytes]):
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_identical_trees_pass(tmp_path):
    files = {"book/a.html": b"<p>same</p>\n", "_images/f.svg": b"<svg/>", "_images/f.png": b"\x89PNG"}
    assert rp.compare(tree(tmp_path / "x", files), tree(tmp_path / "y", files)) == []


def test_a_date_in_a_page_a_changed_image_and_a_missing_file_are_caught(tmp_path):
    x = tree(tmp_path / "x", {"book/a.html": b"<p>Last updated on Nov 29, 2026.</p>\n",
                             "_images/f.png": b"\x89PNG\x00\x01", "only.html": b""})
    y = tree(tmp_path / "y", {"book/a.html": b"<p>Last updated on Jan 01, 2000.</p>\n",
                             "_images/f.png": b"\x89PNG\x00\x02"})
    problems = rp.compare(x, y)
    assert problems[0] == "only in the first build: only.html"
    assert problems[1] == "differs: _images/f.png (6 vs 6 bytes), binary"
    assert problems[2].startswith("differs: book/a.html")
    assert "-<p>Last updated on Nov 29, 2026.</p>" in problems[2]
    assert "+<p>Last updated on Jan 01, 2000.</p>" in problems[2]


def test_every_file_is_compared_buildinfo_and_search_index_included(tmp_path):
    x = tree(tmp_path / "x", {".buildinfo": b"config: 1\ntags: a\n", "searchindex.js": b"a"})
    y = tree(tmp_path / "y", {".buildinfo": b"config: 1\ntags: b\n", "searchindex.js": b"b"})
    assert [p.split(" ")[1] for p in rp.compare(x, y)] == [".buildinfo", "searchindex.js"]


def test_buildinfo_config_hash_alone_may_differ(tmp_path):
    """The configuration's hash names the environment's site-packages folders (see ``MASKED``): a build
    in the reader's environment has another; its tags line and every other byte must still match."""
    x = tree(tmp_path / "x", {".buildinfo": b"# Sphinx\nconfig: 09c75b55\ntags: 645f\n"})
    y = tree(tmp_path / "y", {".buildinfo": b"# Sphinx\nconfig: eb0ce806\ntags: 645f\n"})
    z = tree(tmp_path / "z", {".buildinfo": b"# sphinx\nconfig: eb0ce806\ntags: 645f\n"})
    assert rp.compare(x, y) == [] and len(rp.compare(x, z)) == 1


def test_the_second_build_differs_in_hash_seed_date_and_folder(monkeypatch, capsys):
    """The copy builds with a fixed seed on 1 January 2000; a checkout's build that had the same
    seed is refused (its own is random, or the caller's)."""
    assert rp.VARIANT["PYTHONHASHSEED"] and int(rp.VARIANT["SOURCE_DATE_EPOCH"]) < 10**9
    monkeypatch.setenv("PYTHONHASHSEED", rp.VARIANT["PYTHONHASHSEED"])
    assert rp.main([]) == 1 and "the copy's own seed" in capsys.readouterr().err
