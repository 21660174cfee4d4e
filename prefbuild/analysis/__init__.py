"""Looking at a run: statistics (``stats``), terminal views (``views``), the HTML report (``report``,
``svg``), the one pass@k (``passk``), the one kept/skipped counter (``counters``) and the one rule for
cutting long text (``text``). Modules are imported on use; this package imports nothing."""
