"""grader.sandbox.stacks: the student's frames of a faulthandler dump, nothing else."""

from __future__ import annotations

from pathlib import Path

from grader.sandbox.stacks import parse


def test_only_the_students_files_are_kept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    student = tmp_path / "student.py"
    student.write_text("def chat_loop():\n    while True:\n        pass\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # "<frozen runpy>" would resolve inside the student's folder
    dump = (
        "Timeout (0:00:05)!\n"
        "Current thread 0x00007f (most recent call first):\n"
        f'  File "{student}", line 3 in chat_loop\n'
        '  File "/usr/lib/python3/site-packages/numpy/core/x.py", line 9 in f\n'
        '  File "<frozen runpy>", line 88 in _run_code\n'
        '  File "<string>", line 1 in <module>\n'
    )
    frames = parse(dump, str(student))
    assert [(f["file"], f["line"], f["func"], f["code"]) for f in frames] == [
        ("student.py", 3, "chat_loop", "pass")
    ]
