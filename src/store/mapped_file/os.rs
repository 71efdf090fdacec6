//! Thin OS calls the store needs and std does not offer: fcntl record locks (compatible with
//! Java's `FileChannel.tryLock`), the local UTC offset, and file-system usage.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Tries to take an exclusive fcntl record lock on byte 0 of `file`. Uses an open-file-description
/// lock (conflicts with Java's POSIX lock from another process *and* with a second open of the
/// same store inside this process), falling back to a classic POSIX lock where OFD locks are
/// unavailable. `Ok(false)`: somebody else holds it.
pub fn try_lock_byte0(file: &File) -> io::Result<bool> {
    match set_lock(file, libc::F_OFD_SETLK) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => set_lock(file, libc::F_SETLK),
        other => other,
    }
}

fn set_lock(file: &File, cmd: libc::c_int) -> io::Result<bool> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 1;
    // SAFETY: fd is a valid open descriptor owned by `file`; `fl` is a valid flock for F_*SETLK.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &fl as *const libc::flock) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EAGAIN) => Ok(false),
        _ => Err(err),
    }
}

/// Sizes `file` to `len` bytes with every block allocated (fallocate), so writes through a
/// mapping can never meet a hole the file system cannot fill: a full disk shows here as ENOSPC,
/// not later as SIGBUS inside a mapped write. Where the file system cannot preallocate
/// (EOPNOTSUPP, EINVAL) the file is only sized and stays sparse.
pub fn allocate(file: &File, len: u64) -> io::Result<()> {
    file.set_len(len)?;
    allocate_range(file, 0, len)
}

/// Allocates the blocks of `[from, from + len)` of `file` (already sized); see [`allocate`].
pub fn allocate_range(file: &File, from: u64, len: u64) -> io::Result<()> {
    let bad = |_| io::Error::from(io::ErrorKind::InvalidInput);
    let (from, len) = (
        libc::off_t::try_from(from).map_err(bad)?,
        libc::off_t::try_from(len).map_err(bad)?,
    );
    if len == 0 {
        return Ok(());
    }
    // fallocate(2) itself, not glibc's posix_fallocate: that one emulates an unsupporting file
    // system (NFS, old ZFS) by writing a byte into every block, a quarter-million writes per GiB.
    // SAFETY: fd is a valid open descriptor owned by `file`; mode 0 only allocates.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, from, len) };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => Ok(()),
        _ => Err(err),
    }
}

/// Seconds east of UTC of the local time zone at `epoch_secs` (0 if unknown).
pub fn utc_offset_secs(epoch_secs: i64) -> i64 {
    let t: libc::time_t = epoch_secs as libc::time_t;
    // SAFETY: an all-zero `tm` is valid; localtime_r only writes into the provided struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers reference live, properly aligned locals.
    let res = unsafe { libc::localtime_r(&t, &mut tm) };
    if res.is_null() {
        return 0;
    }
    tm.tm_gmtoff
}

/// (total, free) bytes of the file system holding `path`, as Java's `File.getTotalSpace` and
/// `getFreeSpace` report them (free counts blocks reserved for root); `None` if unknown.
pub fn disk_space(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is valid; statvfs writes into it and reads the C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a live out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let frsize = st.f_frsize as u64;
    Some((st.f_blocks as u64 * frsize, st.f_bfree as u64 * frsize))
}

/// Used ratio of the file system holding `path`, as Java computes it:
/// `(total - free) / (total - free + available)`; `None` if unknown.
pub fn disk_used_ratio(path: &Path) -> Option<f64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is valid; statvfs writes into it and reads the C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a live out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let frsize = st.f_frsize as f64;
    let total = st.f_blocks as f64 * frsize;
    let free = st.f_bfree as f64 * frsize;
    let avail = st.f_bavail as f64 * frsize;
    let used = total - free;
    let denom = used + avail;
    (denom > 0.0).then(|| used / denom)
}

/// The current process id.
pub fn pid() -> u32 {
    std::process::id()
}

/// Total physical memory in bytes (0 if unknown).
pub fn total_physical_memory() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if pages <= 0 || page <= 0 {
        0
    } else {
        pages as u64 * page as u64
    }
}
