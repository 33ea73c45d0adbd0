"""Grading submissions: public and hidden checks over a pristine course, many formats.

`minillm grade` (see `grader.commands.grade`) is built from these parts:

- `checks`: a lab's public checks plus its hidden ones (``solutions/labNN/hidden.py``);
- `submission`: what is taken from a submission (only ``labs/*/student.py``) and how a
  directory, a git checkout or a zip is read safely;
- `course`: the pristine copy of the course that one run grades against;
- `run`: the seam that runs one submission's labs and returns their `LabResult`s (the
  isolation backend wraps this), and the worker process that hosts it;
- `result`: what grading produced (`SubmissionResult`, `BatchResult`); `wire`: a lab's
  result between processes;
- `batch`: many submissions in parallel, result files rewritten as results arrive;
- `classreport`: one self-contained HTML page about a whole class.

The renderers of a batch, one per ``--format``, are in `grader.render`.
"""
