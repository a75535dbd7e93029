package testenv

// Pause freezes the proxy, as SIGSTOP freezes a server: connections stay
// open, new ones are accepted (the kernel would complete the handshake),
// and nothing is forwarded either way until Resume, which delivers what
// was held. Stop resumes first.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

// Resume ends a Pause.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}
