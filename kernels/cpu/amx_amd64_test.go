//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestAMXEncodings checks the byte-encoded AMX instructions of tile_amx_amd64.s: the
// probe runs each of them (LDTILECFG, TILEZERO, the TILELOADDs, TDPBSUD, TDPBSSD, the
// TILESTOREDs, TILERELEASE) and its int32 results must equal a Go matrix product, and,
// where GNU objdump is installed, the disassembly of the probe and of the kernels must
// name exactly the instructions the comments say they encode.
func TestAMXEncodings(t *testing.T) {
	needAMX(t)
	rng := rand.New(rand.NewPCG(3, 4))
	a := make([]byte, 704+512) // two A tiles: 16 rows of 32 signed bytes, 704 bytes apart
	b := make([]byte, 512+512) // two B tiles: 8 rows of 64 unsigned bytes
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	var s amxScratch
	scr := unsafeTiles(&s)
	bq := scr[2048:3072] // the Q4 path's B tiles
	for i := range bq {
		bq[i] = byte(rng.Uint32())
	}
	cfg := newAMXConsts(0)
	kt := cfg[64:] // tmm6: random signed bytes here
	for i := range kt {
		kt[i] = byte(rng.Uint32())
	}
	for _, q4 := range []bool{false, true} {
		for i := range scr[:2048] { // garbage the result area: TILEZERO must clear it
			scr[i] = 0xA5
		}
		amxProbe(&a[0], &b[0], &scr[0], &cfg[0], q4)
		for k := range 2 {
			aa := a[704*k:]
			bs := [][]byte{b[512*k:]}
			if q4 {
				bs = append(bs, bq[512*k:])
			}
			for m := range 16 {
				for n := range 16 {
					var want int32
					for _, bb := range bs {
						for kk := range 32 {
							want += int32(int8(aa[32*m+kk])) * int32(bb[64*(kk/4)+4*n+kk%4])
						}
					}
					for kk := range 32 { // TDPBSSD: signed times signed
						want += int32(int8(aa[32*m+kk])) * int32(int8(kt[64*(kk/4)+4*n+kk%4]))
					}
					got := int32(binary.LittleEndian.Uint32(scr[1024*k+64*m+4*n:]))
					if got != want {
						t.Fatalf("q4=%v tile %d: C[%d][%d] = %d, want %d", q4, k, m, n, got, want)
					}
				}
			}
		}
	}
	checkObjdump(t)
}

// checkObjdump disassembles the test binary with GNU objdump (where installed): its AMX
// instructions must be the probe's sequence (as its comment lists them) and, in the
// kernels, only instructions of that sequence (none decoding as "(bad)" or as another
// instruction), with one LDTILECFG and one TILERELEASE per routine.
func checkObjdump(t *testing.T) {
	od, err := exec.LookPath("objdump")
	if err != nil {
		t.Log("objdump not found: encodings checked by their results only")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(od, "-d", "--no-show-raw-insn", exe).Output()
	if err != nil {
		t.Logf("objdump failed (%v): encodings checked by their results only", err)
		return
	}
	probe := []string{"ldtilecfg (%rax)", "tileloadd 0x40(%rax,%rbx,1),%tmm6", "tilezero %tmm0", "tilezero %tmm1",
		"tileloadd (%rdi,%rdx,1),%tmm2", "tileloadd 0x2c0(%rdi,%rdx,1),%tmm3",
		"tileloadd (%rsi,%rbx,1),%tmm4", "tileloadd 0x200(%rsi,%rbx,1),%tmm5",
		"tdpbsud %tmm4,%tmm2,%tmm0", "tdpbsud %tmm5,%tmm3,%tmm1",
		"tileloadd 0x800(%rax,%rbx,1),%tmm4", "tileloadd 0xa00(%rax,%rbx,1),%tmm5",
		"tdpbsud %tmm4,%tmm2,%tmm0", "tdpbsud %tmm5,%tmm3,%tmm1",
		"tdpbssd %tmm6,%tmm2,%tmm0", "tdpbssd %tmm6,%tmm3,%tmm1",
		"tilestored %tmm0,(%rax,%rbx,1)", "tilestored %tmm1,0x400(%rax,%rbx,1)", "tilerelease"}
	known := map[string]bool{}
	for _, ins := range probe {
		known[ins] = true
	}
	var got []string
	count := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		ins := strings.Join(f[1:], " ")
		if strings.Contains(ins, "tile") || strings.Contains(ins, "tdp") {
			got = append(got, ins)
			count[ins]++
			if !known[ins] {
				t.Errorf("objdump reads %q, not an instruction the kernels mean to encode", ins)
			}
		}
	}
	routines := 1 + len(amxKernels)
	if count["ldtilecfg (%rax)"] != routines || count["tilerelease"] != routines {
		t.Errorf("objdump finds %d LDTILECFG and %d TILERELEASE, want %d each", count["ldtilecfg (%rax)"], count["tilerelease"], routines)
	}
	if !strings.Contains(strings.Join(got, "\n"), strings.Join(probe, "\n")) {
		t.Errorf("objdump does not find the probe's sequence:\n%s\nin the binary's AMX instructions:\n%s", strings.Join(probe, "\n"), strings.Join(got, "\n"))
	}
}
