//! rs-stats: a WASI preview1 command in Rust (std only). Reads its input JSON `{"text": string}` on stdin and prints
//! `{"bytes","chars","lines","words","fnv1a"}` of the text: its size in UTF-8 bytes, its characters (Unicode scalar
//! values), its lines (a last line without a newline counts), its words (runs of non-whitespace) and the FNV-1a 64 hash
//! of its UTF-8 bytes (16 hex digits). Input that is not such an object: a message on stderr, exit 2.
use std::io::{Read, Write};

/// A minimal JSON reader: enough to find the top-level "text" string of an object (escapes and surrogate pairs
/// included); every other value is skipped after checking its shape.
struct Json<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Json<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", b as char, self.i))
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or("a \\u escape needs 4 hex digits")?;
        let t = std::str::from_utf8(h).map_err(|_| "bad \\u escape")?;
        self.i += 4;
        u32::from_str_radix(t, 16).map_err(|_| "bad \\u escape".to_string())
    }

    fn string(&mut self) -> Result<String, String> {
        self.eat(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|_| "a string is not UTF-8".to_string()),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                    self.i += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) && self.s.get(self.i..self.i + 2) == Some(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err("a high surrogate without its low half".to_string());
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(b),
            }
        }
    }

    fn skip(&mut self) -> Result<(), String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'"') => self.string().map(|_| ()),
            Some(b'{') => {
                self.i += 1;
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.string()?;
                    self.eat(b':')?;
                    self.skip()?;
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.skip()?;
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.i)),
                    }
                }
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    self.i += 1;
                }
                if self.i == start { Err(format!("expected a value at byte {}", start)) } else { Ok(()) }
            }
            None => Err("unexpected end of input".to_string()),
        }
    }

    /// The top-level "text" member of an object.
    fn text_member(&mut self) -> Result<String, String> {
        self.eat(b'{')?;
        let mut text: Option<String> = None;
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            return Err("the input has no \"text\"".to_string());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            self.ws();
            if key == "text" {
                if self.s.get(self.i) != Some(&b'"') {
                    return Err("\"text\" must be a string".to_string());
                }
                text = Some(self.string()?);
            } else {
                self.skip()?;
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => break,
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.i)),
            }
        }
        text.ok_or_else(|| "the input has no \"text\"".to_string())
    }
}

fn main() {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        eprintln!("rs-stats: cannot read stdin");
        std::process::exit(2);
    }
    let text = match (Json { s: &input, i: 0 }).text_member() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rs-stats: the input must be a JSON object {{\"text\": string}}: {}", e);
            std::process::exit(2);
        }
    };
    let bytes = text.as_bytes();
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    let lines = newlines + usize::from(!bytes.is_empty() && bytes[bytes.len() - 1] != b'\n');
    let words = text.split_whitespace().count();
    let mut hash: u64 = 0xcbf29ce484222325;
    for b in bytes {
        hash ^= *b as u64;
        hash = hash.wrapping_mul(0x100000001b3);
    }
    let out = format!(
        "{{\"bytes\":{},\"chars\":{},\"lines\":{},\"words\":{},\"fnv1a\":\"{:016x}\"}}\n",
        bytes.len(), text.chars().count(), lines, words, hash
    );
    std::io::stdout().write_all(out.as_bytes()).unwrap();
}
