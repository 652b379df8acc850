"""Running scenarios on the engine (``ccsim._core``): one run in this process, with Ctrl-C and a
progress bar between slices of events, or many on local processes or a Dask cluster."""
