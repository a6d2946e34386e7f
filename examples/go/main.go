// Proves a witness through rapidsnark's C ABI, as go-rapidsnark does with
// `-tags dynamic` (-lrapidsnark), served by proofline's librapidsnark.so.
//
//	CGO_CFLAGS=-I<prefix>/include CGO_LDFLAGS=-L<prefix>/lib go build -o prove .
//	LD_LIBRARY_PATH=<prefix>/lib ./prove circuit.zkey witness.wtns proof.json public.json
package main

/*
#cgo LDFLAGS: -lrapidsnark
#include <stdlib.h>
#include <proofline/rapidsnark/prover.h>
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// prove follows go-rapidsnark's buffer rule: start at 16 KiB and double
// while the library answers PROVER_ERROR_SHORT_BUFFER.
func prove(zkey string, wtns []byte) (string, string, error) {
	path := C.CString(zkey)
	defer C.free(unsafe.Pointer(path))
	proofCap, publicCap := C.ulonglong(16<<10), C.ulonglong(16<<10)
	for {
		proof := make([]byte, proofCap)
		public := make([]byte, publicCap)
		errBuf := make([]byte, 1024)
		proofSize, publicSize := proofCap, publicCap
		rc := C.groth16_prover_zkey_file(path,
			unsafe.Pointer(&wtns[0]), C.ulonglong(len(wtns)),
			(*C.char)(unsafe.Pointer(&proof[0])), &proofSize,
			(*C.char)(unsafe.Pointer(&public[0])), &publicSize,
			(*C.char)(unsafe.Pointer(&errBuf[0])), C.ulonglong(len(errBuf)))
		switch rc {
		case C.PROVER_OK:
			return string(proof[:proofSize]), string(public[:publicSize]), nil
		case C.PROVER_ERROR_SHORT_BUFFER:
			for proofCap < proofSize {
				proofCap *= 2
			}
			for publicCap < publicSize {
				publicCap *= 2
			}
		default:
			return "", "", fmt.Errorf("code %d: %s", rc, C.GoString((*C.char)(unsafe.Pointer(&errBuf[0]))))
		}
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: prove circuit.zkey witness.wtns proof.json public.json")
		os.Exit(2)
	}
	wtns, err := os.ReadFile(os.Args[2])
	if err != nil || len(wtns) == 0 {
		fmt.Fprintln(os.Stderr, os.Args[2]+": cannot read")
		os.Exit(2)
	}
	proof, public, err := prove(os.Args[1], wtns)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.WriteFile(os.Args[3], []byte(proof), 0o644) != nil || os.WriteFile(os.Args[4], []byte(public), 0o644) != nil {
		fmt.Fprintln(os.Stderr, "cannot write the outputs")
		os.Exit(1)
	}
}
