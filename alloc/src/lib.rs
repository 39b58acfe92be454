//! The global allocator of gbnfc's binaries: mimalloc.
//!
//! Compiling a schema builds and drops many small trees, and glibc's malloc took a third
//! of the time. The `mimalloc` crate's allocator sends every request through
//! `mi_malloc_aligned`, whose fast path serves a size only when a free block of exactly
//! that size class happens to be aligned; for sizes whose class is not a power of two
//! (24, 40, 48, … bytes) the first request of a class finds no page yet and falls back to
//! over-allocating from the next class up, so that class's own page is never made and
//! every later request takes the slow path too. Every block `mi_malloc` returns is aligned
//! to the machine word (mimalloc's own `mi_realloc_aligned` relies on this), so requests
//! that need no more than that go to `mi_malloc`, `mi_zalloc` and `mi_realloc`, and only
//! larger alignments to the aligned entry points.

#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

use libmimalloc_sys as ffi;

/// The alignment every block from `mi_malloc` has.
const WORD: usize = core::mem::size_of::<usize>();

/// mimalloc as the global allocator: `#[global_allocator] static A: MiMalloc = MiMalloc;`.
pub struct MiMalloc;

// SAFETY: every pointer returned comes from mimalloc with at least the layout's size and
// alignment (word-aligned blocks from the plain entry points, the aligned entry points
// otherwise), and every pointer freed or reallocated was returned by it.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        by_alignment(layout, ffi::mi_malloc, ffi::mi_malloc_aligned)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        by_alignment(layout, ffi::mi_zalloc, ffi::mi_zalloc_aligned)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        ffi::mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            ffi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
        } else {
            ffi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
        }
    }
}

/// A new block for `layout`: from `plain(size)` when a word's alignment is enough (every
/// block has it), else from `aligned(size, align)`.
///
/// # Safety
/// As [`GlobalAlloc::alloc`]: `layout` has a non-zero size.
#[inline]
unsafe fn by_alignment(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    if layout.align() <= WORD {
        plain(layout.size()).cast()
    } else {
        aligned(layout.size(), layout.align()).cast()
    }
}
