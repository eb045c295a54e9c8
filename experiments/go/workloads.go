package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The same workloads as experiments/workloads.c, with Go's standard
// library in place of OpenSSL and zlib. run gets a random draw made by the
// submitter (the mixed workload's choice), so drawing needs no shared state.
type workload struct {
	name string
	run  func(draw uint64)
}

// sleepWait names the runtime's wait a workload's task sleeps through, ""
// for a task that does not sleep. Go has time.Sleep, which parks the
// goroutine and frees its thread, so the sleep rows and their -wait twins
// run the same call here; the C runners' sleep rows block their threads.
func sleepWait(w *workload) string {
	if strings.HasPrefix(w.name, "sleep-") {
		return "time.Sleep"
	}
	return ""
}

var (
	oneKB     = bytes.Repeat([]byte{'a'}, 1024)
	eightKB   = bytes.Repeat([]byte{'a'}, 8192)
	aesKey    = []byte("0123456789ABCDEF")
	crcInput  = make([]byte, 64)
	scanInput = make([]byte, 4096)
	shaWant   [32]byte
	crcWant   uint32
	scanWant  uint64
	wrong     int32
	mu        sync.Mutex
	muCount   uint64
)

func init() {
	for i := range crcInput {
		crcInput[i] = byte(i*7 + 1) // the C kernel's input
	}
	for i := range scanInput {
		scanInput[i] = byte(i)
	}
}

func flagWrong() { atomic.StoreInt32(&wrong, 1) }

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// encryptCBC: a fresh key schedule, a random IV, PKCS#7 padding, into a
// new buffer (IV first).
func encryptCBC(plain []byte) []byte {
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return nil
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	padded := make([]byte, len(plain)+pad)
	copy(padded, plain)
	for i := len(plain); i < len(padded); i++ {
		padded[i] = byte(pad)
	}
	out := make([]byte, aes.BlockSize+len(padded))
	if _, err := io.ReadFull(rand.Reader, out[:aes.BlockSize]); err != nil {
		return nil
	}
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], padded)
	return out
}

func aesTask(in []byte) {
	if len(encryptCBC(in)) != aes.BlockSize+(len(in)/aes.BlockSize+1)*aes.BlockSize {
		flagWrong()
	}
}

func crcTask() {
	if crc32.ChecksumIEEE(crcInput) != crcWant {
		flagWrong()
	}
}

func scan() uint64 {
	var s uint64
	for _, b := range scanInput {
		s += uint64(b)
	}
	return s
}

var workloads = []*workload{
	{"sleep-1us", func(uint64) { time.Sleep(time.Microsecond) }},
	{"sleep-50ms", func(uint64) { time.Sleep(50 * time.Millisecond) }},
	{"sleep-1us-wait", func(uint64) { time.Sleep(time.Microsecond) }},
	{"sleep-50ms-wait", func(uint64) { time.Sleep(50 * time.Millisecond) }},
	{"sha256-1k", func(uint64) {
		if sha256.Sum256(oneKB) != shaWant {
			flagWrong()
		}
	}},
	{"aes-cbc-1k", func(uint64) { aesTask(oneKB) }},
	{"aes-cbc-8k", func(uint64) { aesTask(eightKB) }},
	{"crc32-64", func(uint64) { crcTask() }},
	{"bytesum-4k", func(uint64) {
		if scan() != scanWant {
			flagWrong()
		}
	}},
	{"mixed", func(draw uint64) {
		if draw%5 == 0 {
			aesTask(oneKB)
		} else {
			crcTask()
		}
	}},
	{"mutex", func(uint64) {
		mu.Lock()
		muCount++
		mu.Unlock()
	}},
}

func findWorkload(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// crcBitwise is the reflected CRC-32 one bit at a time, the reference the
// table-driven library must match.
func crcBitwise(p []byte) uint32 {
	c := ^uint32(0)
	for _, b := range p {
		c ^= uint32(b)
		for k := 0; k < 8; k++ {
			c = (c >> 1) ^ (0xedb88320 & -(c & 1))
		}
	}
	return ^c
}

func verifyWorkloads() error {
	crcWant = crcBitwise(crcInput)
	if crc32.ChecksumIEEE(crcInput) != crcWant {
		return errors.New("the CRC32 kernel does not verify")
	}
	abc := sha256.Sum256([]byte("abc"))
	if abc[0] != 0xba || abc[31] != 0xad {
		return errors.New("the SHA-256 kernel does not verify")
	}
	shaWant = sha256.Sum256(oneKB)
	scanWant = uint64(len(scanInput)/256) * (255 * 256 / 2)
	if scan() != scanWant {
		return errors.New("the byte-sum kernel does not verify")
	}
	c := encryptCBC(oneKB)
	block, _ := aes.NewCipher(aesKey)
	plain := make([]byte, len(c)-aes.BlockSize)
	cipher.NewCBCDecrypter(block, c[:aes.BlockSize]).CryptBlocks(plain, c[aes.BlockSize:])
	if !bytes.Equal(plain[:1024], oneKB) || plain[len(plain)-1] != aes.BlockSize {
		return errors.New("the AES-CBC kernel does not verify")
	}
	return nil
}

func resetWorkload() {
	atomic.StoreInt32(&wrong, 0)
	mu.Lock()
	muCount = 0
	mu.Unlock()
}

func checkWorkload(w *workload, n uint64) error {
	if atomic.LoadInt32(&wrong) != 0 {
		return errors.New("a task computed a wrong result")
	}
	if w.name == "mutex" {
		mu.Lock()
		defer mu.Unlock()
		if muCount != n {
			return errors.New("the mutex counter does not equal the number of tasks")
		}
	}
	return nil
}
