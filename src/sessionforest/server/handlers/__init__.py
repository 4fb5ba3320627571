"""The JSON-RPC methods, one module per area, each declaring its methods in one `Group`:

    sessions  create, list, get, resolve, end, archive
    entries   append, append_many, move_head, checkpoint, seek_checkpoint and the reads
              of one session (entry, entries, log, forest_snapshot, project, status)
    search    search_session_entries, search_chats, search/deep, search/usage
    io        export, import
    feed      subscribe, unsubscribe (the change feed, on the event loop)
    talk      chat/model, chat/reply, chat/stop (the web UI's model replies)

Nothing registers itself on import: `server/api.py` names every group.
"""
