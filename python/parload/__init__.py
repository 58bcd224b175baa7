"""parload: load raw image streams into NumPy arrays.

A raw image stream is a 64-byte file header followed, for each view, by a
32-byte view header and the view's pixels.  parload reads it with a
NUMA-aware pool of threads straight into two arrays, one of every view
header and one of every pixel, and hands them to Python as NumPy arrays
without a copy::

    import parload
    ds = parload.load("scan.raw")             # the whole file
    ds.pixels                                  # ndarray (views, rows, cols)
    ds.headers["angle_deg"]                    # per-view metadata
    sino = parload.load("scan.raw", rows=(100, 116), layout="sinograms")

load() is the one-call form; a Loader keeps its threads for many files
and loads into caller arrays (load_into, empty_like_file); Writer writes
streams from arrays; parload.dask builds dask arrays from files.  Errors
raise parload.Error, an OSError that names the file, view and byte offset.
"""

from ._parload import (
    Dataset,
    Error,
    FileHeader,
    FileNotFoundError,
    Loader,
    PermissionError,
    Writer,
    empty_like_file,
    header_dtype,
    io_names,
    layouts,
    library_version,
    read_header,
    strategies,
)

__all__ = [
    "Dataset",
    "Error",
    "FileHeader",
    "Loader",
    "Writer",
    "empty_like_file",
    "header_dtype",
    "io_names",
    "layouts",
    "library_version",
    "load",
    "read_header",
    "strategies",
]

__version__ = library_version


def load(source, *, threads=0, strategy="parallel", io="posix",
         buffer_size=None, max_read=0, verify=False, keep_going=False,
         allow_truncated=False, numa_bind=True, hugepages=True,
         views=None, rows=None, cols=None, layout="views"):
    """Load a raw image stream and return a Dataset.

    source is a path (str, bytes or os.PathLike), a file descriptor or an
    open file object; a regular file is read by the chosen strategy, a
    pipe or socket as a stream.  The loader options are Loader's, the
    selection (views, rows, cols, layout) Loader.load's.  For many files,
    a Loader avoids starting threads for each.

    Raises parload.Error (a FileNotFoundError too for a missing file).
    """
    with Loader(threads=threads, strategy=strategy, io=io,
                buffer_size=buffer_size, max_read=max_read, verify=verify,
                keep_going=keep_going, allow_truncated=allow_truncated,
                numa_bind=numa_bind, hugepages=hugepages) as loader:
        return loader.load(source, views=views, rows=rows, cols=cols,
                           layout=layout)
