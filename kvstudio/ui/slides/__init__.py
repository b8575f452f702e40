"""Charts for slides: exporters (PNG, SVG, PDF, CSV), the export menu, the slide pack and the
presenter view and its headline numbers.
"""
