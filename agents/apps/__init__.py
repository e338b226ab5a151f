"""What people use: terminal play, the web app (with its page in ``web/``), model export."""
