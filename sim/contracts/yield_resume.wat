;; yield_resume: the simulator's yield/resume (NEP-519) contract, deployed at
;; genesis on yield.near. Written for Nearline; assembled by
;; TestYieldContractIsItsSource (sim/yieldcontract_test.go), which builds the
;; same module from the same instructions with nearvm/wasmtest and compares it
;; with yield_resume.wasm (`go test ./sim -run TestYieldContractIsItsSource
;; -update` writes it).
(module
  (import "env" "input" (func $input (param i64)))
  (import "env" "register_len" (func $register_len (param i64) (result i64)))
  (import "env" "read_register" (func $read_register (param i64 i64)))
  (import "env" "promise_yield_create" (func $promise_yield_create (param i64 i64 i64 i64 i64 i64 i64) (result i64)))
  (import "env" "promise_yield_resume" (func $promise_yield_resume (param i64 i64 i64 i64) (result i32)))
  (import "env" "promise_return" (func $promise_return (param i64)))
  (import "env" "storage_write" (func $storage_write (param i64 i64 i64 i64 i64) (result i64)))
  (import "env" "storage_remove" (func $storage_remove (param i64 i64 i64) (result i64)))
  (import "env" "promise_result" (func $promise_result (param i64 i64) (result i64)))
  (import "env" "value_return" (func $value_return (param i64 i64)))
  (import "env" "log_utf8" (func $log_utf8 (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "on_resume")
  (data (i32.const 64) "01")
  (data (i32.const 80) "timeout")
  (data (i32.const 127) "y")
  (data (i32.const 255) "y")

  ;; request(args): yields on_resume(args) with 20 Tgas, keeps
  ;; "y" ++ data_id -> args in storage and returns the yielded promise.
  (func (export "request") (local $len i64) (local $p i64)
    (call $input (i64.const 0))
    (local.set $len (call $register_len (i64.const 0)))
    (call $read_register (i64.const 0) (i64.const 512))
    (local.set $p (call $promise_yield_create (i64.const 9) (i64.const 0)
      (local.get $len) (i64.const 512) (i64.const 20000000000000) (i64.const 0) (i64.const 1)))
    (call $read_register (i64.const 1) (i64.const 256))
    (drop (call $storage_write (i64.const 33) (i64.const 255) (local.get $len) (i64.const 512) (i64.const 2)))
    (call $promise_return (local.get $p)))

  ;; respond(data_id ++ payload): resumes the yield with payload; when it
  ;; was waiting, removes its storage entry. Returns "1" or "0".
  (func (export "respond") (local $len i64) (local $r i32)
    (call $input (i64.const 0))
    (local.set $len (call $register_len (i64.const 0)))
    (call $read_register (i64.const 0) (i64.const 128))
    (local.set $r (call $promise_yield_resume (i64.const 32) (i64.const 128)
      (i64.sub (local.get $len) (i64.const 32)) (i64.const 160)))
    (if (local.get $r)
      (then (drop (call $storage_remove (i64.const 33) (i64.const 127) (i64.const 3)))))
    (call $value_return (i64.const 1) (i64.add (i64.const 64) (i64.extend_i32_u (local.get $r)))))

  ;; on_resume: the yielded call. Returns the payload it was resumed with,
  ;; or logs "timeout" when the yield timed out (its input failed).
  (func (export "on_resume") (local $len i64)
    (if (i64.eq (call $promise_result (i64.const 0) (i64.const 0)) (i64.const 1))
      (then
        (local.set $len (call $register_len (i64.const 0)))
        (call $read_register (i64.const 0) (i64.const 512))
        (call $value_return (local.get $len) (i64.const 512)))
      (else (call $log_utf8 (i64.const 7) (i64.const 80))))))
