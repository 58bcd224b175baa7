"""parload.dask: a raw image stream as a dask array.

    import parload.dask
    arr = parload.dask.from_file("scan.raw", chunks=(64, -1, -1))
    arr.mean(axis=0).compute()
    cam = parload.dask.from_file(frames, raw="width=1024,height=1024,"
                                 "type=mono12p")

Each chunk is one parload selection load (a range of views, a band of
rows, a range of columns) read by the loader's thread pool, so that
dask.distributed spreads a large scan over workers with every chunk read
in one call.  Needs dask (Debian: python3-dask); importing parload alone
does not import it.
"""

import os
import threading

import dask.array as da
from dask.array.core import normalize_chunks
from dask.base import tokenize

import parload
from parload._parload import _settings

__all__ = ["from_file"]

_local = threading.local()


def _loader(options):
    """This thread's Loader for these options, made once per process."""
    key = (os.getpid(),) + tuple(sorted(options.items()))
    cache = getattr(_local, "loaders", None)
    if cache is None or cache.get("pid") != os.getpid():
        cache = _local.loaders = {"pid": os.getpid()}
    loader = cache.get(key)
    if loader is None:
        loader = cache[key] = parload.Loader(**options)
    return loader


def _load_chunk(path, raw, views, rows, cols, layout, cache, options,
                correct, container):
    ds = _loader(options).load(path, raw=raw, views=views, rows=rows,
                               cols=cols, layout=layout, cache=cache,
                               **correct, **container)
    return ds.pixels


def _bounds(chunks):
    start = 0
    for n in chunks:
        yield start, start + n
        start += n


def _files(path):
    """The source's files (a path or a list of them), for the token."""
    if isinstance(path, (list, tuple)):
        return [os.fspath(p) for p in path]
    return [os.fspath(path)]


def from_file(path, chunks=None, *, raw=None, layout="views", threads=1,
              max_read=0, verify=False, numa_bind=True, hugepages=True,
              cache=None, flats=None, darks=None, reduce="mean",
              minus_log=False, bin=1, dataset=None, frames=None,
              map_sinograms=False, confine=False):
    """Return the pixels of the stream at path as a dask array.

    path is a path or a list of paths read as one stream, raw its layout,
    as in parload.load().

    chunks follows dask.array's conventions over the pixel array's shape,
    (views, rows, cols), or (rows, views, cols) with layout="sinograms";
    the default splits the views alone into chunks of about dask's
    array.chunk-size, each a whole number of the pieces the source is
    stored in (describe()'s "chunks": a Zarr or HDF5 chunk of 16 frames
    is then never read by two chunks).  Each chunk is loaded by one call with threads
    worker threads (default 1: dask runs chunks in parallel already; 0 is
    one per core) of the parallel strategy.  verify checks CRCs, which
    needs chunks of whole views (no row or column split).  The layout is
    described now (parload.describe); the pixels are read when the array
    is computed.  The files must not change meanwhile.  cache is each
    chunk's page-cache mode, as in parload.load() ("drop" or "direct" for
    a scan computed once); an unknown name raises ValueError now.
    map_sinograms copies a sinogram chunk's rows straight from the file
    mapped into memory, with parload.load()'s hazard (SIGBUS if the file
    is truncated during a chunk's load).

    flats, darks, reduce, minus_log and bin correct the pixels as
    parload.load() does: the array is then float32, and each chunk's load
    reduces the references over the chunk's rows and columns (read again
    per chunk: give arrays to read the reference files once).  With
    bin=N the array's rows and columns are the binned ones (the file's
    divided by N, rounded down); a chunk of binned rows reads N times as
    many detector rows.

    dataset and frames pick an HDF5 file's dataset and a tomography
    file's frames, and confine=True keeps the files a .nhdr or an HDF5
    file names in its directory, as in parload.load().
    """
    if cache is not None:
        _settings([("cache", cache)])  # the library's names and message
    options = {"threads": threads, "max_read": max_read, "verify": verify,
               "numa_bind": numa_bind, "hugepages": hugepages,
               "map_sinograms": map_sinograms}
    correct = {"flats": flats, "darks": darks, "reduce": reduce,
               "minus_log": minus_log, "bin": bin}
    corrected = (flats is not None or darks is not None or minus_log or
                 bin != 1)
    files = _files(path)
    path = files if isinstance(path, (list, tuple)) else files[0]
    container = {"dataset": dataset, "frames": frames, "confine": confine}
    d = parload.describe(path, raw=raw, **container)
    b = bin if corrected and bin > 1 else 1
    height, width = d["height"] // b, d["width"] // b
    if layout == "sinograms":
        shape = (height, d["count"], width)
    elif layout == "views":
        shape = (d["count"], height, width)
    else:
        raise ValueError(f"layout: {layout!r} is not a layout "
                         f"(views or sinograms)")
    if chunks is None:
        chunks = ("auto", -1, -1) if layout == "views" else (-1, "auto", -1)
    dtype = "float32" if corrected else d["dtype"]
    # "auto" sizes are whole multiples of the pieces the source is stored
    # in (a Zarr or HDF5 chunk of several frames), so that no piece is
    # read or decoded by two chunks.
    cv, cr, cc = d["chunks"]
    stored = ((cv, cr // b or 1, cc // b or 1) if layout == "views" else
              (cr // b or 1, cv, cc // b or 1))
    chunks = normalize_chunks(chunks, shape=shape, dtype=dtype,
                              previous_chunks=stored)
    stats = [(st.st_size, st.st_mtime_ns) for st in map(os.stat, files)]
    name = "parload-" + tokenize(files, stats, raw, chunks, layout, cache,
                                 options, correct, container)
    vaxis = 0 if layout == "views" else 1
    raxis = 1 - vaxis
    graph = {}
    for i, (v0, v1) in enumerate(_bounds(chunks[vaxis])):
        for j, (r0, r1) in enumerate(_bounds(chunks[raxis])):
            for k, (c0, c1) in enumerate(_bounds(chunks[2])):
                key = (name, i, j, k) if vaxis == 0 else (name, j, i, k)
                graph[key] = (_load_chunk, path, raw, slice(v0, v1),
                              (r0 * b, r1 * b), (c0 * b, c1 * b), layout,
                              cache, options, correct, container)
    return da.Array(graph, name, chunks, dtype=dtype)
