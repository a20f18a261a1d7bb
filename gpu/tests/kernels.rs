//! The one table of kernel entry points (`mien_gpu::Entry`) matches the WGSL it names: every entry
//! point exists in its kernel, and group 0's bindings — their order and whether each is a uniform,
//! a read-only or a read-write storage buffer — are exactly `Entry::slots`. Both device layers build
//! their bind-group layouts from this table, so a kernel edited without the table fails here, not
//! on a device.

use mien_gpu::{Entry, Slot};

fn slots_in(source: &str, file: &str) -> Vec<Slot> {
    let m = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{file}: {}", e.emit_to_string(source)));
    let mut bound: Vec<(u32, Slot)> = m
        .global_variables
        .iter()
        .filter_map(|(_, g)| {
            let b = g.binding.as_ref()?;
            assert_eq!(b.group, 0, "{file}: {:?} outside group 0", g.name);
            let slot = match g.space {
                naga::AddressSpace::Uniform => Slot::Uniform,
                naga::AddressSpace::Storage { access } => {
                    if access.contains(naga::StorageAccess::STORE) {
                        Slot::ReadWrite
                    } else {
                        Slot::Read
                    }
                }
                other => panic!("{file}: {:?} in {other:?}", g.name),
            };
            Some((b.binding, slot))
        })
        .collect();
    bound.sort_by_key(|b| b.0);
    let numbers: Vec<u32> = bound.iter().map(|b| b.0).collect();
    let expected: Vec<u32> = (0..bound.len() as u32).collect();
    assert_eq!(numbers, expected, "{file}: bindings are 0..n without gaps");
    bound.into_iter().map(|b| b.1).collect()
}

#[test]
fn every_entry_binds_the_slots_its_kernel_declares() {
    for entry in Entry::ALL {
        let k = entry.kernel();
        assert!(
            k.entry_points.contains(&entry.name()),
            "{}: no entry point {}",
            k.file,
            entry.name()
        );
        assert_eq!(
            slots_in(k.source, k.file),
            entry.slots(),
            "{:?} ({} {})",
            entry,
            k.file,
            entry.name()
        );
        assert_eq!(Entry::ALL[entry.index()], entry);
    }
}
