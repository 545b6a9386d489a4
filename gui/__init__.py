"""The pygame window of ``zero9 play``: a model, a view and a controller (``model.py``, ``view.py``...).

See ``gui/app.py`` for the command and ``docs/cli-play.md`` for the user's guide.
"""

import os

# pygame prints a banner on import; a teaching tool's console should show only what matters
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
