"""parload: load raw image streams into NumPy arrays.

A raw image stream is a sequence of fixed-size records: parload's own
format (a 64-byte file header, then for each view a 32-byte view header
and the view's pixels), or any raw layout that a camera or detector
writes, described by raw= (a file header of some size, a header of each
view, big-endian or packed 10/12-bit pixels, a gap after each view, many
files as one stream).  parload reads it with a NUMA-aware pool of threads
straight into NumPy arrays, without a copy::

    import parload
    ds = parload.load("scan.raw")             # the whole file
    ds.pixels                                  # ndarray (views, rows, cols)
    ds.headers["angle_deg"]                    # per-view metadata
    sino = parload.load("scan.raw", rows=(100, 116), layout="sinograms")
    edf = parload.load("scan.edf", raw="width=2048,height=2048,type=u16,"
                       "header=512")
    edf.raw_headers                            # (views, 512) uint8

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
    _save,
    describe,
    empty_like_file,
    has_hdf5,
    has_tiff,
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
    "describe",
    "empty_like_file",
    "header_dtype",
    "io_names",
    "layouts",
    "library_version",
    "load",
    "read_header",
    "save",
    "strategies",
    "stream",
]

__version__ = library_version


def load(source, *, raw=None, threads=0, strategy="parallel", io="posix",
         buffer_size=None, max_read=0, verify=False, keep_going=False,
         allow_truncated=False, numa_bind=True, hugepages=True,
         views=None, rows=None, cols=None, layout="views", cache=None,
         flats=None, darks=None, reduce="mean", minus_log=False, bin=1,
         dataset=None, frames=None, map_sinograms=False, confine=False):
    """Load a raw image stream and return a Dataset.

    source is a path (str, bytes or os.PathLike), a list or tuple of
    paths read as one stream (views numbered across the files, in the
    order given), a file descriptor or an open file object; a regular
    file is read by the chosen strategy, a pipe or socket as a stream (a
    FIFO's path once its writer has come; Ctrl-C ends that wait with
    KeyboardInterrupt).  A path is what its first bytes say, else its
    name in any case: a NRRD header (.nhdr names its data files, .nrrd
    holds them), a NumPy .npy (numpy.save's), a TIFF, an HDF5 file, else
    parload's own format.

    raw describes a raw layout, as the command's --raw does: the text
    "width=W,height=H,type=T,offset=N,header=N,gap=N,count=N" (or
    "@PATH", a file holding it), or a dict of the same keys, each value
    an int or a str ("64K"; K M G T are powers of 1024).  width, height
    and type are needed; offset (bytes before the first view, in each
    file), header (bytes of each view's own header, delivered as
    Dataset.raw_headers), gap (bytes after each view's pixels) default
    to 0, count to as many whole views as the files hold.  type is u8
    u16 i16 u32 i32 f32 f64, each with an optional le (the default) or
    be, or one of the packed 12- and 10-bit formats mono12p,
    mono12packed, u12msb and mono10p, unpacked into uint16.  raw given
    for a file of parload's own format overrides its header.  A raw
    layout needs the parallel strategy.

    TIFF and HDF5: a .tif/.tiff path (one file of pages, BigTIFF too), a
    folder or a glob of TIFFs (name order, numbers compared as numbers),
    or a list of TIFFs is one stream; a .h5/.hdf5/.nxs path (or
    "FILE.h5:/name") is an HDF5 file, whose dataset= names the dataset
    (default: /exchange/data, else an NXtomo entry's data, in an
    NXentry or an NXsubentry such as Diamond's /entry1/tomo_entry, else
    a master file's /entry/data/data_000001, data_000002, ... (DECTRIS
    Eiger, NXmx: external links to data files) as one stream of all
    their frames, else the only 3-D dataset; a link to a missing file or
    one that loops raises parload.Error naming it).  A virtual dataset
    stitched from its sources by whole frames is read from the sources;
    mapped otherwise, through libhdf5 (Dataset.stats["serial"] says so).
    Chunks of any shape are decoded by the workers: deflate, shuffle,
    Fletcher32 (checked), bitshuffle (none, LZ4 or Zstd inside), LZ4,
    Zstd, Blosc, LZF and BZip2 (Dataset.stats["codec"] names them);
    other filters (N-bit, scale-offset, unknown plugins) and chunks
    never written go through libhdf5, one thread at a time.
    A list of HDF5 files, or a glob such as "scan_*.h5", is one stream
    of each file's dataset; every file's frames must share the first's
    type and shape and be stored alike, else parload.Error names the
    file and what differs.  frames="projections" (the default), "flats" or
    "darks" picks a tomography file's frames: DXchange's /exchange/data,
    /exchange/data_white or /exchange/data_dark, NXtomo's image_key 0, 1
    or 2 (a master file's image_key counts all its links' frames).
    Dataset.angles holds DXchange's theta, NXtomo's rotation_angle or a
    master file's sample omega in degrees: stored in radians (a units attribute
    "rad", "radian" or "radians") they are converted; in units parload
    does not know, the load fails naming the dataset and the unit.

    Zarr: a store's directory (v2 .zarray or v3 zarr.json, "x.zarr" or
    any name) loads its root array, or the one dataset= (or
    "STORE.zarr:/path") names in it; an OME-Zarr group its first level
    unless dataset= names another ("1").  Each chunk file, or chunk of a
    shard, is read and decoded by the worker that needs it (Blosc, Zstd,
    GZip, Zlib, LZ4, BZ2; v3 bytes, gzip, zstd, blosc, crc32c,
    sharding_indexed); a chunk never written is the fill value; the
    angles come from the attribute "angles".  Leading dimensions of size
    1 are dropped; other shapes, F order, filters and types parload does
    not hold raise parload.Error naming them.

    confine=True keeps the files a file names in its directory: a .nhdr's
    data files, and the files an HDF5 file's external links, virtual
    datasets' sources and external storage name, must lie in the directory of the file that names them,
    or below it, once symbolic links are resolved; any other raises
    parload.Error naming both files (and a .nhdr's line) without being
    read.  Off by default, as NRRD and HDF5 let a file name any file
    ("/etc/shadow", "../x.raw"): give it for files from someone else (a
    service that loads what its users upload).  It holds for flats= and
    darks= too.

    flats, darks, reduce, minus_log and bin ask for a corrected load, in
    float32 (see Loader.load; flats and darks are paths, lists of paths
    or arrays, not descriptors): e.g. corrected -log sinograms of a
    band::

        sino = parload.load("scan.raw", raw=spec, rows=(100, 132),
                            layout="sinograms", flats="flats.raw",
                            darks="darks.raw", minus_log=True).pixels

    flats="same" and darks="same" read the references stored in the scan's
    own HDF5 file (DXchange's /exchange/data_white and data_dark, NXtomo's
    image_key 1 and 2)::

        ds = parload.load("scan.h5", rows=(100, 132), layout="sinograms",
                          flats="same", darks="same", minus_log=True)
        sino, theta = ds.pixels, np.radians(ds.angles)

    The loader options are Loader's, the selection (views, rows, cols,
    layout) Loader.load's.  For many loads, a Loader avoids starting
    threads for each, and, for direct loads, opening the workers'
    queues of reads in flight for each (and, where the kernel gives
    Linux AIO queues rather than io_uring rings, the 30-40 ms it takes
    to free them).

    cache is what the load leaves in the page cache: "keep" (the
    default; None too): the file stays cached, and loads again fast;
    "drop": its pages leave the cache once they are in the dataset, for
    a large file read once that would otherwise evict what else the
    node caches; "direct": O_DIRECT, around the page cache (parallel
    strategy; where the file system refuses it, or for a descriptor or
    another strategy, the load drops instead); "auto": keep a cached
    file or one that fits in half the free memory, else drop.
    Dataset.stats["cache"] says the mode used; any other name raises
    ValueError.

    map_sinograms=True copies a sinogram load's rows straight from the
    file mapped into memory: one copy of each byte instead of two, so
    that sinograms load as fast as views.  The price: if another process
    truncates the file during the load, the kernel kills this process
    with SIGBUS, where a read raises parload.Error.  Only for files that
    nothing shortens while they load; cache "keep" only.

    Raises parload.Error (a FileNotFoundError too for a missing file),
    whose message names the file, and where it applies the view and the
    byte offset.
    """
    with Loader(threads=threads, strategy=strategy, io=io,
                buffer_size=buffer_size, max_read=max_read, verify=verify,
                keep_going=keep_going, allow_truncated=allow_truncated,
                numa_bind=numa_bind, hugepages=hugepages,
                map_sinograms=map_sinograms) as loader:
        return loader.load(source, raw=raw, views=views, rows=rows,
                           cols=cols, layout=layout, cache=cache,
                           flats=flats, darks=darks, reduce=reduce,
                           minus_log=minus_log, bin=bin, dataset=dataset,
                           frames=frames, confine=confine)


def stream(path, *, raw=None, batch_views=None, batch_bytes=None,
           window=None, follow=False, timeout=10.0, threads=0, numa_bind=True,
           hugepages=True, verify=False, keep_going=False,
           allow_truncated=False, views=None, rows=None, cols=None,
           copy=False, cache=None, flats=None, darks=None, reduce="mean",
           minus_log=False, bin=1, dataset=None, frames=None, confine=False):
    """Load path in batches of views, handing each over as it is read.

    path is a path or a list of paths read as one stream, raw its layout
    (as in load()).  Returns a Stream: an iterator of Batch objects
    (first, count, views, headers, pixels of shape (count, rows, cols),
    raw_headers (a raw layout's view headers, (count, header) uint8, or
    None), and the progress views_done, views_total, bytes_done,
    bytes_total, seconds), in file order, and a context manager.  While the caller works on one batch
    the next is being read.  A batch holds batch_views views, or about
    batch_bytes pixel bytes (default: about 4 MiB at first, each next
    batch of a file twice the last, up to 32 MiB; through a window 4 MiB
    at most).  views, rows and cols
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
    timeout seconds pass without growth (a raw layout followed needs one
    file and a count), then raises parload.Error
    (PARLOAD_ETRUNCATED), or with allow_truncated ends after the
    complete views.  verify, keep_going, threads, numa_bind and hugepages
    are Loader's, cache (the page-cache mode) load()'s; Stream.stats
    ["cache"] says the mode used.  flats, darks, reduce, minus_log and
    bin correct each batch as load() does (Loader.load): the references
    are reduced once, before the first batch, and the pixels are float32.
    dataset and frames pick a container's data, and confine keeps the
    files a file names in its directory, as in load().

    Ending early (break, close(), leaving the with block, or dropping the
    stream) cancels the load.  The GIL is released while a batch is
    awaited; Ctrl-C raises KeyboardInterrupt at the next batch and
    cancels the load.  A failure raises parload.Error, naming the view
    and byte offset, after every batch before it was delivered.
    """
    loader = Loader(threads=threads, strategy="parallel", verify=verify,
                    keep_going=keep_going, allow_truncated=allow_truncated,
                    numa_bind=numa_bind, hugepages=hugepages)
    return Stream(loader, path, raw=raw, batch_views=batch_views,
                  batch_bytes=batch_bytes, window=window, follow=follow,
                  timeout=timeout, views=views, rows=rows, cols=cols,
                  copy=copy, cache=cache, flats=flats, darks=darks,
                  reduce=reduce, minus_log=minus_log, bin=bin,
                  dataset=dataset, frames=frames, confine=confine)


def save(path, data, dataset=None, compress=None, force=False, angles=None,
         window=None, png_depth=8, chunks=None, zarr_format=None,
         shard=None):
    """Write data as a TIFF (.tif, .tiff), an HDF5 file (.h5, .hdf5,
    .hdf, .nxs, .cxi), a NumPy .npy, a PNG image (.png) or a Zarr store
    (.zarr), by path's extension in any case, as `parload extract -o`
    does.

    data is a Dataset (its pixels in its layout, and the angles of its
    view headers when any is not 0) or a NumPy array of 2 dimensions (one
    page) or 3 (pages, rows, cols) of a pixel type parload reads; a TIFF
    holds one uncompressed page per view (per sinogram for a Dataset in
    sinogram layout), BigTIFF from 4 GiB, with the shaped description
    tifffile reads as one 3-D array.  HDF5: dataset is the dataset's path
    (default /exchange/data, or /exchange/sinograms for sinograms),
    compress "gzip" or "gzip=LEVEL" (deflate with shuffle; default level
    4), angles (degrees, one per view) go to /exchange/theta.  A .npy
    holds the array (pages, rows, cols) as numpy.save writes it, without
    angles.

    A Zarr store is a directory holding the array (pages, rows, cols):
    Zarr v2 by default (.zarray, .zattrs, chunk files "i.j.k", which
    zarr.open reads), zarr_format=3 for v3 (zarr.json, chunk files
    "c/i/j/k"), with shard=N for shards of N chunks along the pages (the
    sharding_indexed codec, its index at the end with its CRC-32C).
    chunks=(pages, rows, cols), -1 for all of a dimension (fewer sizes:
    the rest whole), by default one page per chunk; a chunk past the
    array's edge is padded with zeros, the fill value.  compress
    "zstd", "blosc" (LZ4 inside, byte shuffle) or "gzip", each also
    "NAME=LEVEL" (zstd 1 to 22, default 3; blosc and gzip 1 to 9,
    defaults 5 and 4); none by default.  The angles go to the array's
    attributes as "angles".  The chunks are encoded and written by one
    thread a CPU.  force replaces an existing Zarr store only (a directory
    holding .zarray, .zgroup or zarr.json), never another directory or a
    file.

    A PNG is a grey image of one page (a 2-D array, or one view or one
    sinogram: a stack of several pages raises parload.Error saying how to
    pick one).  png_depth=8 (the default): value v is written as
    round(255 * (v - lo) / (hi - lo)) clamped to 0..255 (NaN: 0), with
    window=(lo, hi), by default the 0.5th and 99.5th percentiles of the
    image's values (numpy.percentile(..., method="lower")).  png_depth=16:
    the values unscaled, for integer types whose values are 0 to 65535;
    window does not apply.  PNG needs libparload built with libpng.

    The file is written under a hidden temporary name beside path
    (.NAME.XXXXXX) and put in place: nothing is left behind on failure
    (a process killed by SIGKILL leaves that file, which may be deleted).
    An existing path raises parload.Error unless force is true, also one
    that appears while the file is written.  The GIL is released while
    the file is written.
    """
    layout = "views"
    if isinstance(data, Dataset):
        layout = data.layout
        if angles is None and len(data) and data.angles.any():
            angles = data.angles
        data = data.pixels
    if angles is not None:
        import numpy
        angles = numpy.ascontiguousarray(angles, dtype=numpy.float32)
    if png_depth not in (8, 16):
        raise ValueError("png_depth %r: 8 or 16" % (png_depth,))
    if window is not None:
        lo, hi = (float(w) for w in window)
        if not lo < hi:
            raise ValueError("window %r: lo must be below hi" % (window,))
        window = (lo, hi)
    extra = {}
    if chunks is not None:
        extra["chunks"] = (chunks,) if isinstance(chunks, int) else chunks
    if zarr_format is not None:
        if zarr_format not in (2, 3):
            raise ValueError("zarr_format %r: 2 or 3" % (zarr_format,))
        extra["zarr_format"] = zarr_format
    if shard is not None:
        extra["shard"] = int(shard)
        if extra["shard"] < 1:
            raise ValueError("shard %r: 1 or more chunks" % (shard,))
    if compress is not None and not isinstance(compress, str):
        raise ValueError("unknown compression %r" % (compress,))
    _save(path, data, layout=layout, angles=angles, dataset=dataset,
          compress=compress, force=bool(force), window=window,
          png_depth=png_depth, **extra)
