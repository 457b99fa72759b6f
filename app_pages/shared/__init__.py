"""What the app's pages share: the upload readers, the one model cache, the controls."""
