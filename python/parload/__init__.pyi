import builtins
import os
from typing import (Any, Dict, Iterable, Iterator, Mapping, NamedTuple,
                    Optional, Sequence, Tuple, Union)

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Paths = Union[_Path, Sequence[_Path]]
_Source = Union[_Path, Sequence[_Path], int, Any]
# raw=: "width=W,height=H,type=T,..." (or "@PATH"), or a dict of those keys
_Raw = Union[None, str, bytes, Mapping[str, Union[int, str]]]
_Part = Union[None, slice, range, Tuple[Optional[int], Optional[int]]]
# flats= and darks=: a path or a list of paths (read with raw=; not a
# descriptor or a file object: TypeError), "same" (the scan's own HDF5
# file's flats or darks) or frames (N, H, W) or (H, W).
_Refs = Union[None, _Path, Sequence[_Path], np.ndarray]
# confine=True (wherever a source is taken): the files a file names (a
# .nhdr's data files, an HDF5 file's external links and external storage)
# must lie in its directory or below it, links resolved, else
# parload.Error naming both; off by default, as NRRD and HDF5 let a file
# name any file ("/etc/shadow", "../x"): give it for files from someone
# else.  It holds for flats= and darks= too.

header_dtype: np.dtype
library_version: str
THREADS_MAX: int
__version__: str

class Error(OSError):
    code: str
    view: Optional[int]
    offset: Optional[int]

class FileNotFoundError(Error, builtins.FileNotFoundError): ...
class PermissionError(Error, builtins.PermissionError): ...

class FileHeader(NamedTuple):
    version_major: int
    version_minor: int
    file_header_size: int
    view_header_size: int
    view_count: int
    width: int
    height: int
    pixel_type: str
    bytes_per_pixel: int
    flags: int
    payload_size: int
    dtype: np.dtype

class Dataset:
    @property
    def pixels(self) -> np.ndarray: ...
    @property
    def headers(self) -> np.ndarray: ...
    @property
    def angles(self) -> npt.NDArray[np.float32]: ...
    @property
    def bad_views(self) -> npt.NDArray[np.uint64]: ...
    @property
    def raw_headers(self) -> Optional[npt.NDArray[np.uint8]]: ...
    @property
    def desc(self) -> Dict[str, Any]: ...
    @property
    def file_header(self) -> Optional[FileHeader]: ...
    @property
    def stats(self) -> dict[str, Any]: ...
    @property
    def views(self) -> range: ...
    @property
    def rows(self) -> range: ...
    @property
    def cols(self) -> range: ...
    @property
    def bin(self) -> int: ...
    @property
    def layout(self) -> str: ...
    def __len__(self) -> int: ...

class Loader:
    def __init__(self, *, threads: int = 0, strategy: str = "parallel",
                 io: str = "posix", buffer_size: Optional[int] = None,
                 max_read: int = 0, verify: bool = False,
                 keep_going: bool = False, allow_truncated: bool = False,
                 numa_bind: bool = True, hugepages: bool = True,
                 map_sinograms: bool = False) -> None: ...
    def load(self, source: _Source, *, raw: _Raw = None,
             views: _Part = None, rows: _Part = None, cols: _Part = None,
             layout: Optional[str] = None,
             cache: Optional[str] = None, flats: _Refs = None,
             darks: _Refs = None, reduce: str = "mean",
             minus_log: bool = False, bin: int = 1,
             dataset: Optional[str] = None,
             frames: Optional[str] = None,
             confine: bool = False) -> Dataset: ...
    def load_into(self, source: _Source, pixels: np.ndarray,
                  headers: Optional[np.ndarray] = None, *, raw: _Raw = None,
                  raw_headers: Optional[np.ndarray] = None,
                  views: _Part = None, rows: _Part = None,
                  cols: _Part = None,
                  layout: Optional[str] = None,
                  cache: Optional[str] = None,
                  dataset: Optional[str] = None,
                  frames: Optional[str] = None,
                  confine: bool = False) -> Dataset: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Loader": ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def threads(self) -> Optional[int]: ...
    @property
    def strategy(self) -> str: ...
    @property
    def closed(self) -> bool: ...

class Writer:
    def __init__(self, path: Union[str, bytes, "os.PathLike[str]"], n: int,
                 height: int, width: int, dtype: npt.DTypeLike, *,
                 crc: bool = False) -> None: ...
    def write(self, header: Any, pixels: npt.ArrayLike) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def written(self) -> int: ...
    @property
    def file_header(self) -> FileHeader: ...
    @property
    def closed(self) -> bool: ...

class Batch(NamedTuple):
    first: int
    count: int
    views: range
    headers: np.ndarray
    pixels: np.ndarray
    raw_headers: Optional[npt.NDArray[np.uint8]]
    views_done: int
    views_total: int
    bytes_done: int
    bytes_total: int
    seconds: float

class Stream(Iterator[Batch]):
    def __init__(self, loader: Loader, path: _Paths, *, raw: _Raw = None,
                 batch_views: Optional[int] = None,
                 batch_bytes: Optional[int] = None,
                 window: Optional[int] = None, follow: bool = False,
                 timeout: float = 10.0, views: _Part = None,
                 rows: _Part = None, cols: _Part = None,
                 copy: bool = False, flats: _Refs = None,
                 darks: _Refs = None, reduce: str = "mean",
                 minus_log: bool = False, bin: int = 1,
                 dataset: Optional[str] = None,
                 frames: Optional[str] = None,
                 confine: bool = False) -> None: ...
    def __iter__(self) -> "Stream": ...
    def __next__(self) -> Batch: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Stream": ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def stats(self) -> Optional[Dict[str, Any]]: ...
    @property
    def bad_views(self) -> Optional[Tuple[int, ...]]: ...
    @property
    def shape(self) -> Tuple[int, int, int]: ...
    @property
    def dtype(self) -> np.dtype: ...

def stream(path: _Paths, *, raw: _Raw = None,
           batch_views: Optional[int] = None,
           batch_bytes: Optional[int] = None, window: Optional[int] = None,
           follow: bool = False, timeout: float = 10.0, threads: int = 0,
           numa_bind: bool = True, hugepages: bool = True,
           verify: bool = False, keep_going: bool = False,
           allow_truncated: bool = False, views: _Part = None,
           rows: _Part = None, cols: _Part = None,
           copy: bool = False, cache: Optional[str] = None,
           flats: _Refs = None, darks: _Refs = None,
           reduce: str = "mean", minus_log: bool = False,
           bin: int = 1, dataset: Optional[str] = None,
           frames: Optional[str] = None,
           confine: bool = False) -> Stream: ...
def load(source: _Source, *, raw: _Raw = None, threads: int = 0,
         strategy: str = "parallel",
         io: str = "posix", buffer_size: Optional[int] = None,
         max_read: int = 0, verify: bool = False, keep_going: bool = False,
         allow_truncated: bool = False, numa_bind: bool = True,
         hugepages: bool = True, views: _Part = None, rows: _Part = None,
         cols: _Part = None, layout: str = "views",
         cache: Optional[str] = None, flats: _Refs = None,
         darks: _Refs = None, reduce: str = "mean", minus_log: bool = False,
         bin: int = 1, dataset: Optional[str] = None,
         frames: Optional[str] = None,
         map_sinograms: bool = False,
         confine: bool = False) -> Dataset: ...
def read_header(source: Union[_Path, int, Any]) -> FileHeader: ...
def save(path: _Path, data: Union[Dataset, npt.ArrayLike],
         dataset: Optional[str] = None, compress: Optional[str] = None,
         force: bool = False,
         angles: Optional[npt.ArrayLike] = None,
         window: Optional[Tuple[float, float]] = None,
         png_depth: int = 8,
         chunks: Union[int, Sequence[Optional[int]], None] = None,
         zarr_format: Optional[int] = None,
         shard: Optional[int] = None) -> None: ...
def describe(source: _Source, *, raw: _Raw = None,
             allow_truncated: bool = False, dataset: Optional[str] = None,
             frames: Optional[str] = None,
             confine: bool = False) -> Dict[str, Any]: ...
def has_tiff() -> bool: ...
def has_hdf5() -> bool: ...
def empty_like_file(source: _Source, *, raw: _Raw = None,
                    views: _Part = None,
                    rows: _Part = None, cols: _Part = None,
                    layout: Optional[str] = None,
                    hugepages: bool = True, dataset: Optional[str] = None,
                    frames: Optional[str] = None, confine: bool = False
                    ) -> Tuple[np.ndarray, np.ndarray]: ...
def strategies() -> Tuple[str, ...]: ...
def io_names() -> Tuple[str, ...]: ...
def layouts() -> Tuple[str, ...]: ...
