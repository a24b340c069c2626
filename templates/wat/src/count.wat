;; count — a reach-wasm tool in the WebAssembly text format: a WASI preview1 command, assembled with binaryen's
;; wasm-as (shipped with reach-wasm).
;;
;; The tool ABI of kind "wasm": the input arrives as JSON on stdin, the output is JSON on stdout, exit code 0 means
;; success (anything else fails the step with EXEC_TOOL_FAILED), stderr is the tool's log. The host API is the
;; optional import module "reach" (docs/authoring.md, "wasm"): here one `log` call.
;;
;; Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
;; newline and carriage return in "text" (JSON escapes \n \t \r count as those).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "reach" "call" (func $reach_call (param i32 i32 i32 i32 i32 i32 i32) (result i32)))

  ;; 0: iovec, 16: byte count, 64: constant strings, 1024: host response, 2048: output, 65536: input (1 MiB)
  (memory (export "memory") 17)
  (global $INPUT i32 (i32.const 65536))
  (global $INPUT_CAP i32 (i32.const 1048576))
  (data (i32.const 64) "\"text\"")                                 ;; 64, 6 bytes
  (data (i32.const 80) "log")                                      ;; 80, 3 bytes
  (data (i32.const 96) "{\"level\":\"info\",\"message\":\"counted ") ;; 96, 35 bytes
  (data (i32.const 144) " words\"}")                               ;; 144, 8 bytes
  (data (i32.const 160) "{\"words\":")                             ;; 160, 9 bytes
  (data (i32.const 176) "count: the input has no string \"text\"\n") ;; 176, 38 bytes

  ;; Write len bytes at ptr to fd.
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 16))))

  ;; Read stdin into INPUT until end of file (or the buffer is full); returns the length.
  (func $read_all (result i32)
    (local $used i32)
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $used) (global.get $INPUT_CAP)))
        (i32.store (i32.const 0) (i32.add (global.get $INPUT) (local.get $used)))
        (i32.store (i32.const 4) (i32.sub (global.get $INPUT_CAP) (local.get $used)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
        (br_if $done (i32.eqz (i32.load (i32.const 16))))
        (local.set $used (i32.add (local.get $used) (i32.load (i32.const 16))))
        (br $more)))
    (local.get $used))

  (func $is_space (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
      (i32.or (i32.eq (local.get $c) (i32.const 0x0a)) (i32.eq (local.get $c) (i32.const 0x0d)))))

  ;; The words of the string value of "text" in INPUT[0, n); -1 when there is no string "text".
  (func $count_words (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $end i32) (local $c i32) (local $space i32) (local $in i32) (local $words i32)
    (local.set $end (i32.add (global.get $INPUT) (local.get $n)))
    (local.set $i (global.get $INPUT))
    ;; find the 6 bytes "text" (with quotes)
    (block $found
      (loop $scan
        (if (i32.gt_u (i32.add (local.get $i) (i32.const 6)) (local.get $end)) (then (return (i32.const -1))))
        (local.set $j (i32.const 0))
        (block $differ
          (loop $cmp
            (br_if $differ (i32.ne (i32.load8_u (i32.add (local.get $i) (local.get $j)))
                                   (i32.load8_u (i32.add (i32.const 64) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $found (i32.eq (local.get $j) (i32.const 6)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (local.set $i (i32.add (local.get $i) (i32.const 6)))
    ;; skip white space and the colon
    (block $skipped
      (loop $skip
        (br_if $skipped (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $skipped (i32.eqz (i32.or (call $is_space (local.get $c)) (i32.eq (local.get $c) (i32.const 0x3a)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $skip)))
    (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (block $closed
      (loop $char
        (br_if $closed (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $closed (i32.eq (local.get $c) (i32.const 0x22)))
        (local.set $space (call $is_space (local.get $c)))
        (if (i32.and (i32.eq (local.get $c) (i32.const 0x5c)) (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $end)))
          (then
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $c (i32.load8_u (local.get $i)))
            (local.set $space (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x6e)) (i32.eq (local.get $c) (i32.const 0x74)))
                                      (i32.eq (local.get $c) (i32.const 0x72))))))
        (if (i32.and (i32.eqz (local.get $space)) (i32.eqz (local.get $in)))
          (then (local.set $words (i32.add (local.get $words) (i32.const 1)))))
        (local.set $in (i32.eqz (local.get $space)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $char)))
    (local.get $words))

  ;; Write the decimal digits of v at dst; returns how many.
  (func $itoa (param $v i32) (param $dst i32) (result i32)
    (local $n i32) (local $t i32) (local $k i32)
    (local.set $t (local.get $v))
    (loop $digits
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
      (br_if $digits (local.get $t)))
    (local.set $k (local.get $n))
    (loop $emit
      (local.set $k (i32.sub (local.get $k) (i32.const 1)))
      (i32.store8 (i32.add (local.get $dst) (local.get $k)) (i32.add (i32.const 0x30) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $emit (local.get $k)))
    (local.get $n))

  (func (export "_start")
    (local $words i32) (local $len i32)
    (local.set $words (call $count_words (call $read_all)))
    (if (i32.lt_s (local.get $words) (i32.const 0))
      (then
        (call $write (i32.const 2) (i32.const 176) (i32.const 38))
        (call $proc_exit (i32.const 1))))
    ;; the log request: {"level":"info","message":"counted N words"} built at 2048
    (memory.copy (i32.const 2048) (i32.const 96) (i32.const 35))
    (local.set $len (i32.add (i32.const 35) (call $itoa (local.get $words) (i32.const 2083))))
    (memory.copy (i32.add (i32.const 2048) (local.get $len)) (i32.const 144) (i32.const 8))
    (local.set $len (i32.add (local.get $len) (i32.const 8)))
    (drop (call $reach_call (i32.const 80) (i32.const 3) (i32.const 2048) (local.get $len)
                            (i32.const 1024) (i32.const 256) (i32.const 20)))
    ;; the output: {"words":N}\n
    (memory.copy (i32.const 2048) (i32.const 160) (i32.const 9))
    (local.set $len (i32.add (i32.const 9) (call $itoa (local.get $words) (i32.const 2057))))
    (i32.store8 (i32.add (i32.const 2048) (local.get $len)) (i32.const 0x7d))
    (i32.store8 (i32.add (i32.const 2049) (local.get $len)) (i32.const 0x0a))
    (call $write (i32.const 1) (i32.const 2048) (i32.add (local.get $len) (i32.const 2))))
)
