//! count — a reach-wasm tool in Rust (std, wasm32-wasi; no crates, so it builds offline with plain rustc).
//!
//! The tool ABI of kind "wasm": the input arrives as JSON on stdin, the output is JSON on stdout, exit code 0 means
//! success (anything else fails the step with EXEC_TOOL_FAILED), stderr is the tool's log. The host API is the
//! optional import module "reach" (docs/authoring.md, "wasm"): here one `log` call.
//!
//! Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
//! newline and carriage return in "text" (JSON escapes \n \t \r count as those).
use std::io::{Read, Write};
use std::process::ExitCode;

#[link(wasm_import_module = "reach")]
extern "C" {
    #[link_name = "call"]
    fn reach_call(op: *const u8, op_len: i32, req: *const u8, req_len: i32, resp: *mut u8, resp_cap: i32, resp_len_out: *mut u32) -> i32;
}

/// Call a host operation; returns the status (0 OK, 1 buffer too small, 2 invalid, 3 unknown op, 4 error).
fn host(op: &str, request: &str) -> i32 {
    let mut response = [0u8; 256];
    let mut len: u32 = 0;
    unsafe {
        reach_call(op.as_ptr(), op.len() as i32, request.as_ptr(), request.len() as i32, response.as_mut_ptr(), response.len() as i32, &mut len)
    }
}

/// The words of the string value of "text", counted as it is scanned; None when there is no string "text".
fn count_words(json: &[u8]) -> Option<u64> {
    let key = json.windows(6).position(|w| w == b"\"text\"")?;
    let mut i = key + 6;
    while i < json.len() && matches!(json[i], b' ' | b'\t' | b'\n' | b'\r' | b':') {
        i += 1;
    }
    if json.get(i) != Some(&b'"') {
        return None;
    }
    let (mut words, mut in_word) = (0u64, false);
    i += 1;
    while i < json.len() && json[i] != b'"' {
        let mut space = matches!(json[i], b' ' | b'\t' | b'\n' | b'\r');
        if json[i] == b'\\' && i + 1 < json.len() {
            i += 1;
            space = matches!(json[i], b'n' | b't' | b'r');
        }
        if !space && !in_word {
            words += 1;
        }
        in_word = !space;
        i += 1;
    }
    Some(words)
}

fn main() -> ExitCode {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::FAILURE;
    }
    let words = match count_words(&input) {
        Some(words) => words,
        None => {
            eprintln!("count: the input has no string \"text\"");
            return ExitCode::FAILURE;
        }
    };
    host("log", &format!("{{\"level\":\"info\",\"message\":\"counted {} words\"}}", words));
    let mut out = std::io::stdout();
    if writeln!(out, "{{\"words\":{}}}", words).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
