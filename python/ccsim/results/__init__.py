"""What a run measured: the ``Result`` tables and files, plots, metrics computed from the tables,
and ARIMA models of RTT series."""
