"""A run's dataset: its layout (``layout``), Arrow tables from NumPy columns (``arrow``), the directory writer and
loader (``directory``), where a dataset is read from (``source``) or bundled (``bundle``), and a dataset in a store:
its prefix (``store_prefix``), its writer (``store_writer``) and its reader (``store_reader``)."""
