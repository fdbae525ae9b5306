"""The dynamics server's request rules without ROS (``rbd_ros.services``): the ROS-free halves
of ``test/ros``'s service tests, in the ROS-free run (``pytest -m "not ros"``). A package, so its
files keep the names of their ROS halves (``services.test_ik_services`` beside
``test_ik_services``), which import the fixtures and helpers they share from here."""
