"""parload.mpi: each MPI rank loads its part of a raw image stream.

Over libparload-mpi and an mpi4py communicator (Debian: python3-mpi4py)::

    from mpi4py import MPI
    import parload.mpi
    part = parload.mpi.load(MPI.COMM_WORLD, "scan.raw", split="rows")
    part.pixels        # this rank's sinograms: (rows, views, cols)
    part.index         # its place: whole[part.index] is part.pixels

Every call is collective over the communicator and succeeds on every rank
or raises the same parload.Error on every rank ("rank R: ..." names the
lowest rank that failed).  Importing this module imports mpi4py.MPI,
which initialises MPI.
"""

try:
    from ._parload_mpi import Part
    from ._parload_mpi import load as _load
except ImportError as e:  # not built: say why at import
    raise ImportError(
        "parload.mpi needs the package built with libparload-mpi and "
        "mpi4py (configure's summary, or pip install -v, says whether "
        f"it was): {e}") from e

__all__ = ["Part", "load"]


def load(comm, path, split="views", *, raw=None, threads=0, io="pool",
         verify=False, keep_going=False, allow_truncated=False,
         numa_bind=True, hugepages=True, node_split=True, views=None,
         rows=None, cols=None, cache=None, dataset=None, frames=None,
         flats=None, darks=None, reduce="mean", minus_log=False, bin=1,
         map_sinograms=False):
    """Collective over comm (an mpi4py communicator): load this rank's
    part of path and return it as a Part.

    raw describes a raw layout as in parload.load() (a str or a dict of
    its keys, given on every rank), None for parload's own format (or a
    file that states its layout: a NRRD header, a NumPy .npy, a TIFF, an
    HDF5 file).  Rank 0 reads and validates the file header (or fits the
    layout to the file) and the file's size once and broadcasts them;
    every rank then loads only its part with libparload's thread pool.
    split="views" gives each rank a contiguous range of the selected
    views (counts differ by at most one) in view layout; split="rows" a
    slab of the selected detector rows of every view, in sinogram layout
    (rows, views, cols), what reconstruction wants.  A rank left without
    views or rows gets empty arrays.

    views, rows and cols select what is shared out, as in parload.load().
    threads=0 divides the cores of each node between the ranks on it
    (node_split=False takes threads as given); io="mpiio" reads with one
    collective MPI_File_read_at_all per rank instead of the pool
    (parload's own format only).  verify, keep_going, allow_truncated,
    numa_bind and hugepages are parload.Loader's, cache (the page-cache
    mode, as in parload.load()) is each rank's load's with the pool;
    io="mpiio" ignores it.  Part.stats["cache"] says the mode used.
    map_sinograms copies split="rows" parts straight from the file mapped
    into memory, with parload.load()'s hazard (SIGBUS, which kills the
    rank, if the file is truncated during the load).  The GIL is released
    during the load.

    dataset and frames pick a TIFF or HDF5 file's data as in
    parload.load() (rank 0 reads its metadata; io="pool" only).  flats,
    darks, reduce, minus_log and bin correct each rank's part as
    parload.load() does, in float32: each rank reads and reduces the
    references over its own rows; with bin=N the ranks share out whole
    bins (global_shape and the row ranges count binned rows).

    Part.raw_headers holds a raw layout's view headers of the part's
    views, Part.desc the layout (as Dataset's).

    Part.pixels and Part.headers view the part's memory without a copy,
    valid as long as any of them is referenced.  Part.index and
    Part.global_shape place the part in the whole: parload.load(path,
    layout=part.layout).pixels[part.index] equals part.pixels.
    """
    return _load(comm, path, split, raw=raw, threads=threads, io=io,
                 verify=verify, keep_going=keep_going,
                 allow_truncated=allow_truncated,
                 numa_bind=numa_bind, hugepages=hugepages,
                 node_split=node_split, views=views, rows=rows, cols=cols,
                 cache=cache, dataset=dataset, frames=frames, flats=flats,
                 darks=darks, reduce=reduce, minus_log=minus_log, bin=bin,
                 map_sinograms=map_sinograms)
