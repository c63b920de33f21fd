"""The session screen (`screen`) and what only it uses: its workers' bodies (`loading`,
`replays`), the messages they post (`messages`), its keys and their remapping (`keys`,
`keymap`), the tuning keys' rule (`figures`), what the transcript lists (`entries`,
`listing_cache`), follow mode, the palette, the demo tour and the comparing screens it
opens (`comparing`)."""
