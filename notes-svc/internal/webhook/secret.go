package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// Sealed secrets start with a format byte, so that secrets stored without
// a key can be sealed later without guessing which rows are which.
const (
	formatPlain  byte = 0
	formatAESGCM byte = 1
)

// Cipher seals endpoint secrets at rest with AES-256-GCM. A nil *Cipher
// (no key configured) stores them as they are, which docs/API.md says.
type Cipher struct {
	aead cipher.AEAD
}

// ParseKey decodes NOTES_WEBHOOK_SECRET_KEY: 32 bytes in standard base64.
// An empty value means no key, and a nil Cipher.
func ParseKey(s string) (*Cipher, error) {
	if s == "" {
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) != 32 {
		return nil, errors.New("webhook secret key must be 32 bytes in standard base64")
	}
	return NewCipher(key)
}

// NewCipher returns a Cipher under a 32-byte key.
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != 32 {
		return nil, errors.New("webhook secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("webhook cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("webhook cipher: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// Seal seals secret for the endpoint named by aad (its id), so that a
// sealed secret copied to another row does not open there.
func (c *Cipher) Seal(secret, aad string) ([]byte, error) {
	if c == nil {
		return append([]byte{formatPlain}, secret...), nil
	}
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal webhook secret: %w", err)
	}
	out := append([]byte{formatAESGCM}, nonce...)
	return c.aead.Seal(out, nonce, []byte(secret), []byte(aad)), nil
}

// Open returns the secret Seal sealed for aad.
func (c *Cipher) Open(sealed []byte, aad string) (string, error) {
	if len(sealed) == 0 {
		return "", errors.New("open webhook secret: empty")
	}
	switch sealed[0] {
	case formatPlain:
		return string(sealed[1:]), nil
	case formatAESGCM:
		if c == nil {
			return "", ErrNoSecretKey
		}
		n := c.aead.NonceSize()
		if len(sealed) < 1+n {
			return "", errors.New("open webhook secret: too short")
		}
		plain, err := c.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(aad))
		if err != nil {
			return "", fmt.Errorf("open webhook secret: %w", ErrNoSecretKey)
		}
		return string(plain), nil
	}
	return "", errors.New("open webhook secret: unknown format")
}

// NewSecret returns a new signing secret: "whsec_" and 32 random bytes in
// unpadded base64url. The whole string is the HMAC key.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new webhook secret: %w", err)
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}
