"""The finished product's own code: training a model, scoring it, loading it to chat.

`training` runs `minillm train` (`data`: the corpus and tokenizer it trains on, `display`:
its live display and a finished log's summary), `scoring` is what `minillm eval` reports,
and `engine` loads the model that `chat`, `generate`, `serve` and `mine` run. Everything
here stands on `framework/` alone: it knows nothing of labs, checks or grading.
"""
