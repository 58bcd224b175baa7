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

load() is the one-call form; stream() hands over batches of views while
the load runs; a Loader keeps its threads for many files
and loads into caller arrays (load_into, empty_like_file); Writer writes
streams from arrays; parload.dask builds dask arrays from files.  Errors
raise parload.Error, an OSError that names the file, view and byte offset.
"""

from ._parload import (
    THREADS_MAX,
    Batch,
    Dataset,
    Error,
    FileHeader,
    FileNotFoundError,
    Loader,
    PermissionError,
    Stream,
    Writer,
    empty_like_file,
    header_dtype,
    io_names,
    layouts,
    library_version,
    read_header,
    strategies,
    THREADS_MAX,
)

__all__ = [
    "THREADS_MAX",
    "Batch",
    "Dataset",
    "Error",
    "FileHeader",
    "Loader",
    "Stream",
    "Writer",
    "empty_like_file",
    "header_dtype",
    "io_names",
    "layouts",
    "library_version",
    "load",
    "read_header",
    "strategies",
    "stream",
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


def stream(path, *, batch_views=None, batch_bytes=None, window=None,
           follow=False, timeout=10.0, threads=0, numa_bind=True,
           hugepages=True, verify=False, keep_going=False,
           allow_truncated=False, views=None, rows=None, cols=None,
           copy=False):
    """Load path in batches of views, handing each over as it is read.

    Returns a Stream: an iterator of Batch objects (first, count, views,
    headers, pixels of shape (count, rows, cols), and the progress
    views_done, views_total, bytes_done, bytes_total, seconds), in file
    order, and a context manager.  While the caller works on one batch
    the next is being read.  A batch holds batch_views views, or about
    batch_bytes pixel bytes (default about 4 MiB).  views, rows and cols
    select as in load(); the layout is always views.

    Lifetime of the arrays: without a window the load fills memory of
    its own and a batch's arrays view it, valid for as long as any of
    them is referenced, like Dataset's.  With window=N (bytes) the file
    is read through two reused windows of at most N bytes, so that a
    file larger than memory streams through 2 N: a batch's arrays are
    then read-only and valid only until the next batch or close() (the
    next batch overwrites them).  copy=True hands over copies instead.

    follow=True reads a file still being written: the stream waits for
    views not yet in the file until the header's count is reached or
    timeout seconds pass without growth, then raises parload.Error
    (PARLOAD_ETRUNCATED), or with allow_truncated ends after the
    complete views.  verify, keep_going, threads, numa_bind and hugepages
    are Loader's.

    Ending early (break, close(), leaving the with block, or dropping the
    stream) cancels the load.  The GIL is released while a batch is
    awaited; Ctrl-C raises KeyboardInterrupt at the next batch and
    cancels the load.  A failure raises parload.Error, naming the view
    and byte offset, after every batch before it was delivered.
    """
    loader = Loader(threads=threads, strategy="parallel", verify=verify,
                    keep_going=keep_going, allow_truncated=allow_truncated,
                    numa_bind=numa_bind, hugepages=hugepages)
    return Stream(loader, path, batch_views=batch_views,
                  batch_bytes=batch_bytes, window=window, follow=follow,
                  timeout=timeout, views=views, rows=rows, cols=cols,
                  copy=copy)
