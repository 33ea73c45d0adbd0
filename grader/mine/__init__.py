"""`--mine`: the course's model, running the code the student wrote in the labs.

Thirteen labs each have the student write one part of a GPT and its product; without
this, the finished chat would never run a line of theirs. With `minillm chat --mine` (and
`generate --mine`, `serve --mine`) every piece a lab covers, the softmax, the attention
scores and mask, LayerNorm, the residual add, the block, the sampler, the KV cache, BPE
encoding, the chat format and the HTTP parsing and responses, is the student's own
function from ``labs/*/student.py`` where that lab is done, and the framework's where it
is not; a table at start-up says which and why. `minillm mine --check` compares both
ways, piece by piece, and names the first piece whose output differs.

- `pieces`: the catalogue of pieces and `Pieces`, the functions a run calls;
- `load`: importing the student's modules; `choose`: deciding each piece;
- `probe`: the timing probe; `banner`: the table;
- `forward`, `decode`, `tokenize`, `engine`: the model, the decode loop, BPE and the chat
  engine run through the pieces; `check`: the comparison.

The student's code runs in the student's own process here, on purpose: it is their
machine and their chat. Grading never comes through this package.

Nothing is imported here, so that `grader.mine.cli` (the flags every product command
has) stays cheap to import.
"""
