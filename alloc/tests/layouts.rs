//! The allocator meets every layout's size and alignment, on both paths (word-aligned
//! requests through mimalloc's plain entry points, larger alignments through the aligned
//! ones), and `realloc` keeps the contents.

use std::alloc::{GlobalAlloc, Layout};

use gbnfc_alloc::MiMalloc;

const SIZES: [usize; 14] = [
    1,
    3,
    8,
    13,
    24,
    40,
    48,
    100,
    1000,
    1025,
    4096,
    5000,
    70_000,
    1 << 20,
];
const ALIGNS: [usize; 6] = [1, 2, 8, 16, 64, 4096];

fn fill(ptr: *mut u8, len: usize, seed: u8) {
    for i in 0..len {
        // SAFETY: `ptr` points to at least `len` bytes the test owns.
        unsafe { ptr.add(i).write(seed.wrapping_add(i as u8)) };
    }
}

fn holds(ptr: *const u8, len: usize, seed: u8) -> bool {
    // SAFETY: `ptr` points to at least `len` initialised bytes the test owns.
    (0..len).all(|i| unsafe { ptr.add(i).read() } == seed.wrapping_add(i as u8))
}

#[test]
fn every_block_has_its_size_and_alignment() {
    for align in ALIGNS {
        for size in SIZES {
            let layout = Layout::from_size_align(size, align).expect("valid layout");
            // Many at once, so some come from fresh pages and some from free lists.
            let blocks: Vec<*mut u8> = (0..32)
                .map(|k| {
                    // SAFETY: the layout has a non-zero size.
                    let ptr = unsafe { MiMalloc.alloc(layout) };
                    assert!(!ptr.is_null(), "size {size}, align {align}");
                    assert_eq!(ptr as usize % align, 0, "size {size}, align {align}");
                    fill(ptr, size, k);
                    ptr
                })
                .collect();
            for (k, &ptr) in blocks.iter().enumerate() {
                assert!(holds(ptr, size, k as u8), "size {size}, align {align}");
                // SAFETY: allocated above with this layout, freed once.
                unsafe { MiMalloc.dealloc(ptr, layout) };
            }
        }
    }
}

#[test]
fn zeroed_blocks_are_zero() {
    for align in ALIGNS {
        for size in SIZES {
            let layout = Layout::from_size_align(size, align).expect("valid layout");
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { MiMalloc.alloc_zeroed(layout) };
            assert!(!ptr.is_null());
            assert_eq!(ptr as usize % align, 0, "size {size}, align {align}");
            // SAFETY: `size` bytes were allocated and zeroed.
            assert!((0..size).all(|i| unsafe { ptr.add(i).read() } == 0));
            // SAFETY: allocated above with this layout, freed once.
            unsafe { MiMalloc.dealloc(ptr, layout) };
        }
    }
}

#[test]
fn realloc_keeps_the_contents_and_the_alignment() {
    for align in ALIGNS {
        for (&from, &to) in SIZES.iter().zip(SIZES.iter().rev()) {
            let layout = Layout::from_size_align(from, align).expect("valid layout");
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { MiMalloc.alloc(layout) };
            assert!(!ptr.is_null());
            fill(ptr, from, 7);
            // SAFETY: `ptr` was allocated with `layout`; `to` is non-zero and the new
            // layout is valid.
            let moved = unsafe { MiMalloc.realloc(ptr, layout, to) };
            assert!(!moved.is_null());
            assert_eq!(moved as usize % align, 0, "{from} -> {to}, align {align}");
            assert!(
                holds(moved, from.min(to), 7),
                "{from} -> {to}, align {align}"
            );
            let new_layout = Layout::from_size_align(to, align).expect("valid layout");
            // SAFETY: `moved` holds `new_layout`, freed once.
            unsafe { MiMalloc.dealloc(moved, new_layout) };
        }
    }
}
