"""Looking at a run: statistics (``stats``), terminal views (``views``), the HTML report (``report``,
``svg``) and the one pass@k (``passk``). Modules are imported on use; this package imports nothing."""
