"""Start-up and the app's surroundings: the QApplication, settings, the bundled font,
translations, resource paths, display names.
"""
