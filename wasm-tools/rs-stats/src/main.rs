//! rs-stats: a WASI preview1 command in Rust (std only). Reads its input JSON on stdin and prints
//! {"bytes","lines","fnv1a","now_ms","files"}: the input's size and line count, its FNV-1a 64 hash, the (virtual)
//! wall clock in milliseconds, and the sorted names in the preopened /data directory (if there is one).
use std::io::{Read, Write};
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        eprintln!("rs-stats: cannot read stdin");
        std::process::exit(2);
    }
    let lines = input.iter().filter(|b| **b == b'\n').count();
    let mut hash: u64 = 0xcbf29ce484222325;
    for b in &input {
        hash ^= *b as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut files: Vec<String> = match std::fs::read_dir("/data") {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let names: Vec<String> = files.iter().map(|f| format!("\"{}\"", f.replace('\\', "\\\\").replace('"', "\\\""))).collect();
    let out = format!(
        "{{\"bytes\":{},\"lines\":{},\"fnv1a\":\"{:016x}\",\"now_ms\":{},\"files\":[{}]}}\n",
        input.len(), lines, hash, now_ms, names.join(",")
    );
    std::io::stdout().write_all(out.as_bytes()).unwrap();
}
