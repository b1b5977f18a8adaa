//! The two facts about executables the kernel-event recorder needs: which
//! dynamic loader a program asks for (`PT_INTERP`), and where in the system
//! loader's file `_dl_debug_state` lies. glibc's loader calls that function
//! when it starts mapping libraries and again when every library is mapped
//! and relocated, just before the program's own code runs: a uprobe there
//! ends the "loading" phase of a process start without stopping it.

use object::elf::{FileHeader64, PT_INTERP, PT_LOAD};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSymbol};

/// The program interpreter a file asks for, read from its first 64 KiB.
pub fn interpreter(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(65536);
    std::fs::File::open(path)
        .ok()?
        .take(65536)
        .read_to_end(&mut head)
        .ok()?;
    let hdr = FileHeader64::<Endianness>::parse(&*head).ok()?;
    let endian = hdr.endian().ok()?;
    for ph in hdr.program_headers(endian, &*head).ok()? {
        if ph.p_type(endian) == PT_INTERP {
            let data = ph.data(endian, &*head).ok()?;
            let s = data.split(|&b| b == 0).next()?;
            return Some(String::from_utf8_lossy(s).into_owned());
        }
    }
    None
}

/// The file offset of a dynamic symbol of a shared object.
pub fn symbol_file_offset(path: &std::path::Path, name: &str) -> Option<u64> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let vaddr = file
        .dynamic_symbols()
        .chain(file.symbols())
        .find(|s| s.name().is_ok_and(|n| n == name))?
        .address();
    let hdr = FileHeader64::<Endianness>::parse(&*data).ok()?;
    let endian = hdr.endian().ok()?;
    for ph in hdr.program_headers(endian, &*data).ok()? {
        let start = ph.p_vaddr(endian);
        let end = start + ph.p_filesz(endian);
        if ph.p_type(endian) == PT_LOAD && (start..end).contains(&vaddr) {
            return Some(vaddr - start + ph.p_offset(endian));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_loader_of_a_dynamic_program() {
        let exe = std::env::current_exe().unwrap();
        let Some(interp) = interpreter(&exe) else {
            eprintln!("SKIPPED: this test binary is static");
            return;
        };
        assert!(interp.contains("ld"), "{interp}");
        if let Some(off) = symbol_file_offset(std::path::Path::new(&interp), "_dl_debug_state") {
            assert!(off > 0);
        }
        assert!(interpreter(std::path::Path::new("/dev/null")).is_none());
        assert!(symbol_file_offset(&exe, "no_such_symbol_xyz").is_none());
    }
}
